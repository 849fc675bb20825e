import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { checkDebugFileName, checkRunId, FolderDebugFiles } from "./debug-files.js";
import { inTransaction } from "./pg-connect.js";
import type { StoredDebugFile } from "./types.js";

/** One row per MiB: a debug file (a downloaded feed under `source/`) is streamed in and out, never held whole. */
const CHUNK_BYTES = 1024 * 1024;

const DEFAULT_LIMIT_BYTES = 64 * 2 ** 20;

/**
 * Debug files in PostgreSQL, so any daemon of a cluster serves any run's
 * files. Written once when the run ends, in one transaction: a reader sees
 * the whole file or none of it. A file over the limit (the copy of a 2 GB
 * feed under `source/`, the plan of a million creates) is not copied into
 * the database: it stays in the run folder of the daemon that ran it, which
 * serves it from there until the run is pruned.
 */
export class PgDebugFiles {
  private readonly limitBytes: number;
  private readonly local: FolderDebugFiles | null;

  constructor(
    private readonly pool: pg.Pool,
    options: { limitBytes?: number | undefined; dataDir?: string | undefined } = {},
  ) {
    this.limitBytes = options.limitBytes ?? DEFAULT_LIMIT_BYTES;
    this.local = options.dataDir ? new FolderDebugFiles(options.dataDir) : null;
  }

  async put(runId: string, name: string, file: string): Promise<void> {
    checkRunId(runId);
    checkDebugFileName(name);
    const { size } = await stat(file);
    if (size > this.limitBytes) {
      throw new ConveyorError("state", `debug file ${name} (${(size / 2 ** 20).toFixed(1)} MB) is larger than debug_file_limit (${(this.limitBytes / 2 ** 20).toFixed(0)} MB): it stays in the run folder ${path.dirname(file)} of this host`, {
        details: { name, size, limit: this.limitBytes },
        hint: "Read it through this daemon or raise CONVEYOR_DEBUG_FILE_LIMIT.",
      });
    }
    await inTransaction(this.pool, async (client) => {
      await client.query("DELETE FROM debug_files WHERE run_id = $1 AND name = $2", [runId, name]);
      await client.query("INSERT INTO debug_files (run_id, name, size, chunks) VALUES ($1, $2, 0, 0)", [runId, name]);
      let seq = 0;
      let size = 0;
      const insert = (bytes: Buffer): Promise<unknown> => client.query("INSERT INTO debug_file_chunks (run_id, name, seq, bytes) VALUES ($1, $2, $3, $4)", [runId, name, seq++, bytes]);
      // Whole chunks but the last, even if a read comes back short: `get` finds an offset's chunk by division.
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
        pending.push(chunk as Buffer);
        pendingBytes += (chunk as Buffer).length;
        size += (chunk as Buffer).length;
        while (pendingBytes >= CHUNK_BYTES) {
          const all = Buffer.concat(pending);
          await insert(all.subarray(0, CHUNK_BYTES));
          pending = [all.subarray(CHUNK_BYTES)];
          pendingBytes = all.length - CHUNK_BYTES;
        }
      }
      if (pendingBytes > 0) await insert(Buffer.concat(pending));
      await client.query("UPDATE debug_files SET size = $3, chunks = $4 WHERE run_id = $1 AND name = $2", [runId, name, size, seq]);
    });
  }

  async get(runId: string, name: string): Promise<StoredDebugFile | null> {
    checkRunId(runId);
    checkDebugFileName(name);
    const { rows } = await this.pool.query<{ size: string; chunks: number }>("SELECT size, chunks FROM debug_files WHERE run_id = $1 AND name = $2", [runId, name]);
    const row = rows[0];
    if (!row) return (await this.local?.get(runId, name)) ?? null;
    const { chunks: count } = row;
    const pool = this.pool;
    // Every chunk but the last holds CHUNK_BYTES: a start offset names its chunk without reading the ones before.
    async function* chunks(start: number): AsyncGenerator<Buffer> {
      for (let seq = Math.floor(start / CHUNK_BYTES); seq < count; seq++) {
        const part = await pool.query<{ bytes: Buffer }>("SELECT bytes FROM debug_file_chunks WHERE run_id = $1 AND name = $2 AND seq = $3", [runId, name, seq]);
        const bytes = part.rows[0]?.bytes;
        // The run was pruned while the file was being read: end short rather than hang.
        if (!bytes) return;
        const skip = seq * CHUNK_BYTES < start ? start - seq * CHUNK_BYTES : 0;
        yield skip > 0 ? bytes.subarray(skip) : bytes;
      }
    }
    return { size: Number(row.size), open: (start = 0) => Readable.from(chunks(start), { objectMode: false }) };
  }

  async list(runId: string): Promise<string[]> {
    checkRunId(runId);
    const { rows } = await this.pool.query<{ name: string }>("SELECT name FROM debug_files WHERE run_id = $1 ORDER BY name", [runId]);
    const names = new Set(rows.map((r) => r.name));
    for (const name of (await this.local?.list(runId)) ?? []) names.add(name);
    return [...names].sort();
  }
}
