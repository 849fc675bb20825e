import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { inTransaction, openPgPool, parsePgUrl, type PgOptions } from "./pg-connect.js";
import { PgDebugFiles } from "./pg-debug-files.js";
import { interruptedError } from "./interrupted.js";
import { pgLock, pgReleaseLock, pgRenewLock } from "./pg-locks.js";
import { insertLogs, pruneLogs, searchLogs } from "./pg-logs.js";
import { STATUS_MODES, deriveStatus } from "./status.js";
import type {
  AutomationLock,
  AutomationStatus,
  LedgerEntry,
  LogBatch,
  LogPage,
  LogQuery,
  LockRequest,
  RunListQuery,
  RunMode,
  RunProgressSnapshot,
  RunRecord,
  SnapshotPutEntry,
  StateStore,
  StoredDebugFile,
} from "./types.js";
import { snapshotValuesText } from "./snapshot-entry.js";

const CHUNK = 10_000;

interface RunRow {
  body: RunRecord;
  progress: RunProgressSnapshot | null;
  heartbeat: Date | string | null;
}

/** The record with its progress while it runs (the column holds the newer heartbeat too). */
function runFromRow(row: RunRow): RunRecord {
  const run = row.body;
  if (run.outcome !== null || !row.progress) return run;
  const heartbeat = row.heartbeat instanceof Date ? row.heartbeat.toISOString() : (row.heartbeat ?? run.heartbeat);
  return { ...run, heartbeat, progress: row.progress };
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The state of several daemons in one PostgreSQL database: the same interface
 * and the same answers as the SQLite store. Open it with `PostgresStore.open`,
 * which migrates the schema first. `pool` and `schema` are public so the
 * daemon's own tables (and the run queue) share the connections.
 */
export class PostgresStore implements StateStore {
  private readonly debugFiles: PgDebugFiles;
  private closed = false;

  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    options: PgOptions,
  ) {
    this.debugFiles = new PgDebugFiles(pool, { limitBytes: options.debugFileLimitBytes, dataDir: options.dataDir });
  }

  static async open(url: string, options: PgOptions = {}): Promise<PostgresStore> {
    const target = parsePgUrl(url, options);
    return new PostgresStore(await openPgPool(target), target.schema, options);
  }

  async createRun(run: RunRecord): Promise<void> {
    const insert = [
      "INSERT INTO runs (id, automation, account, mode, started, finished, outcome, heartbeat, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
      [run.id, run.automation, run.account, run.mode, run.started, run.finished, run.outcome, run.heartbeat, JSON.stringify(run)],
    ] as const;
    const events = run.events ?? [];
    if (events.length === 0) {
      await this.pool.query(insert[0], [...insert[1]]);
      return;
    }
    await inTransaction(this.pool, async (client) => {
      await client.query(insert[0], [...insert[1]]);
      await client.query("INSERT INTO run_events (event_id, run_id) SELECT e, $2 FROM unnest($1::text[]) AS e ON CONFLICT DO NOTHING", [events, run.id]);
    });
  }

  async saveProgress(id: string, progress: RunProgressSnapshot): Promise<void> {
    await this.pool.query("UPDATE runs SET progress = $2, heartbeat = $3 WHERE id = $1 AND outcome IS NULL", [id, JSON.stringify(progress), progress.at]);
  }

  /** Read, merge and write under the row's lock, so two writers of one run never lose each other's fields. */
  async updateRun(id: string, patch: Partial<Omit<RunRecord, "id">>): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ body: RunRecord }>("SELECT body FROM runs WHERE id = $1 FOR UPDATE", [id]);
      const current = rows[0]?.body;
      if (!current) throw new ConveyorError("state", `run ${id} does not exist`);
      const { progress: _progress, ...next }: RunRecord = { ...current, ...patch, id };
      await client.query("UPDATE runs SET finished = $2, outcome = $3, heartbeat = $4, body = $5 WHERE id = $1", [id, next.finished, next.outcome, next.heartbeat, JSON.stringify(next)]);
    });
  }

  async getRun(id: string): Promise<RunRecord | null> {
    const { rows } = await this.pool.query<RunRow>("SELECT body, progress, heartbeat FROM runs WHERE id = $1", [id]);
    const row = rows[0];
    return row ? runFromRow(row) : null;
  }

  async listRuns(query: RunListQuery = {}): Promise<RunRecord[]> {
    const args: unknown[] = [];
    const where: string[] = [];
    for (const column of ["automation", "account", "mode"] as const) {
      const value = query[column];
      if (value === undefined) continue;
      args.push(value);
      where.push(`${column} = $${args.length}`);
    }
    if (query.event !== undefined) {
      args.push(query.event);
      where.push(`id IN (SELECT run_id FROM run_events WHERE event_id = $${args.length})`);
    }
    args.push(query.limit ?? 100);
    const sql = `SELECT body, progress, heartbeat FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY started DESC, id DESC LIMIT $${args.length}`;
    const { rows } = await this.pool.query<RunRow>(sql, args);
    return rows.map(runFromRow);
  }

  /**
   * Safe with several daemons sweeping at once: the UPDATE claims the stale
   * runs (a row another sweep claimed first no longer has a null outcome),
   * and each daemon gets back only the runs it marked.
   */
  async markInterrupted(staleBefore: Date, dead: readonly string[] = []): Promise<RunRecord[]> {
    const finished = new Date().toISOString();
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ body: RunRecord }>(
        `UPDATE runs SET outcome = 'failed', finished = $2
         WHERE outcome IS NULL AND (heartbeat IS NULL OR heartbeat < $1 OR id = ANY($3::text[])) RETURNING body`,
        [staleBefore.toISOString(), finished, [...dead]],
      );
      const marked = rows.map((r): RunRecord => ({ ...r.body, outcome: "failed", finished, error: interruptedError(r.body) }));
      if (marked.length) {
        await client.query("UPDATE runs SET body = u.body FROM unnest($1::text[], $2::json[]) AS u(id, body) WHERE runs.id = u.id", [
          marked.map((r) => r.id),
          marked.map((r) => JSON.stringify(r)),
        ]);
      }
      return marked.sort((a, b) => (a.started === b.started ? (a.id < b.id ? -1 : 1) : a.started < b.started ? -1 : 1));
    });
  }

  async pruneRuns(before: Date): Promise<number> {
    // Log records go with the runs that wrote them: both are kept for run_retention.
    await pruneLogs(this.pool, before.toISOString().replace("T", " ").slice(0, 19));
    const result = await this.pool.query("DELETE FROM runs WHERE outcome IS NOT NULL AND started < $1", [before.toISOString()]);
    return result.rowCount ?? 0;
  }

  async status(automation: string): Promise<AutomationStatus> {
    const reset = await this.pool.query<{ mode: RunMode; at: string }>("SELECT mode, at FROM status_reset WHERE automation = $1", [automation]);
    const resets: Partial<Record<RunMode, string>> = Object.fromEntries(reset.rows.map((r) => [r.mode, r.at]));
    // The newest run of each mode, however many of the other mode came after it.
    const newest = await Promise.all(
      STATUS_MODES.map((mode) =>
        this.pool.query<{ body: RunRecord }>("SELECT body FROM runs WHERE automation = $1 AND mode = $2 AND ($3::timestamptz IS NULL OR started > $3::timestamptz) ORDER BY started DESC, id DESC LIMIT 1", [
          automation,
          mode,
          resets[mode] ?? null,
        ]),
      ),
    );
    return deriveStatus(newest.flatMap((r) => r.rows.map((row) => row.body)), resets);
  }

  async resetStatus(automation: string, mode: RunMode): Promise<void> {
    await this.pool.query("INSERT INTO status_reset (automation, mode, at) VALUES ($1, $2, $3) ON CONFLICT (automation, mode) DO UPDATE SET at = excluded.at", [
      automation,
      mode,
      new Date().toISOString(),
    ]);
  }

  async snapshotGet(key: string, identifiers: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    for (const chunk of chunks(identifiers)) {
      const { rows } = await this.pool.query<{ identifier: string; v: Record<string, string> }>(
        `SELECT identifier, "values" AS v FROM snapshots WHERE key = $1 AND identifier = ANY($2::text[])`,
        [key, chunk],
      );
      for (const row of rows) out.set(row.identifier, row.v);
    }
    return out;
  }

  async snapshotText(key: string, identifiers: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const chunk of chunks(identifiers)) {
      // json (not jsonb) keeps the text it was given, byte for byte.
      const { rows } = await this.pool.query<{ identifier: string; v: string }>(
        `SELECT identifier, "values"::text AS v FROM snapshots WHERE key = $1 AND identifier = ANY($2::text[])`,
        [key, chunk],
      );
      for (const row of rows) out.set(row.identifier, row.v);
    }
    return out;
  }

  async snapshotSources(key: string, identifiers: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const chunk of chunks(identifiers)) {
      const { rows } = await this.pool.query<{ identifier: string; source: string }>(
        `SELECT identifier, source FROM snapshots WHERE key = $1 AND identifier = ANY($2::text[]) AND source IS NOT NULL`,
        [key, chunk],
      );
      for (const row of rows) out.set(row.identifier, row.source);
    }
    return out;
  }

  async *snapshotSourcePages(key: string, pageSize = CHUNK): AsyncGenerator<Array<[string, string | null]>> {
    let after = "";
    for (;;) {
      const { rows } = await this.pool.query<{ identifier: string; source: string | null }>(
        "SELECT identifier, source FROM snapshots WHERE key = $1 AND identifier > $2 ORDER BY identifier LIMIT $3",
        [key, after, pageSize],
      );
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.identifier ?? after;
      yield rows.map((r): [string, string | null] => [r.identifier, r.source]);
      if (rows.length < pageSize) return;
    }
  }

  /**
   * Stamped with this worker's clock, like the SQLite store: the run prunes by
   * a time it took from the same clock, so a database clock that differs
   * cannot make a full run forget what it just wrote.
   */
  async snapshotPut(key: string, entries: readonly SnapshotPutEntry[]): Promise<void> {
    const now = new Date().toISOString();
    // One statement cannot upsert a row twice: the last entry of an identifier wins, as in SQLite.
    const last = new Map<string, SnapshotPutEntry>();
    for (const e of entries) last.set(e.identifier, e);
    for (const chunk of chunks([...last.values()])) {
      await this.pool.query(
        `INSERT INTO snapshots (key, identifier, "values", updated, source)
         SELECT $1, u.identifier, u.v, $4, u.source FROM unnest($2::text[], $3::json[], $5::text[]) AS u(identifier, v, source)
         ON CONFLICT (key, identifier) DO UPDATE SET "values" = excluded."values", updated = excluded.updated, source = excluded.source`,
        [key, chunk.map((e) => e.identifier), chunk.map(snapshotValuesText), now, chunk.map((e) => e.source ?? null)],
      );
    }
  }

  async snapshotDelete(key: string, identifiers: readonly string[]): Promise<void> {
    for (const chunk of chunks(identifiers)) await this.pool.query("DELETE FROM snapshots WHERE key = $1 AND identifier = ANY($2::text[])", [key, chunk]);
  }

  async snapshotCount(key: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>("SELECT count(*)::integer AS n FROM snapshots WHERE key = $1", [key]);
    return rows[0]?.n ?? 0;
  }

  async snapshotPruneBefore(key: string, since: string): Promise<number> {
    const result = await this.pool.query("DELETE FROM snapshots WHERE key = $1 AND updated < $2", [key, since]);
    return result.rowCount ?? 0;
  }

  async ledgerHas(key: string, entry: LedgerEntry): Promise<boolean> {
    const { rowCount } = await this.pool.query("SELECT 1 FROM ledger WHERE key = $1 AND path = $2 AND size = $3 AND modified = $4", [
      key,
      entry.path,
      entry.size,
      entry.modified ?? "",
    ]);
    return (rowCount ?? 0) > 0;
  }

  async ledgerAdd(key: string, entries: readonly LedgerEntry[]): Promise<void> {
    const now = new Date().toISOString();
    for (const chunk of chunks(entries)) {
      await this.pool.query(
        `INSERT INTO ledger (key, path, size, modified, added)
         SELECT $1, u.path, u.size, u.modified, $5 FROM unnest($2::text[], $3::bigint[], $4::text[]) AS u(path, size, modified)
         ON CONFLICT DO NOTHING`,
        [key, chunk.map((e) => e.path), chunk.map((e) => e.size), chunk.map((e) => e.modified ?? ""), now],
      );
    }
  }

  async addLogs(account: string, logs: LogBatch): Promise<void> {
    await insertLogs(this.pool, account, logs);
  }

  async searchLogs(query: LogQuery): Promise<LogPage> {
    return searchLogs(this.pool, query);
  }

  async putDebugFile(runId: string, name: string, file: string): Promise<void> {
    await this.debugFiles.put(runId, name, file);
  }

  async getDebugFile(runId: string, name: string): Promise<StoredDebugFile | null> {
    return this.debugFiles.get(runId, name);
  }

  async listDebugFiles(runId: string): Promise<string[]> {
    return this.debugFiles.list(runId);
  }

  async lockAutomation(request: LockRequest, leaseMs: number): Promise<AutomationLock> {
    return pgLock(this.pool, request, leaseMs);
  }

  async renewLock(automation: string, runId: string): Promise<boolean> {
    return pgRenewLock(this.pool, automation, runId);
  }

  async releaseLock(automation: string, runId: string): Promise<void> {
    await pgReleaseLock(this.pool, automation, runId);
  }

  async putUndoChunk(runId: string, chunk: number, body: Buffer): Promise<void> {
    await this.pool.query("INSERT INTO undo_journal (run_id, chunk, body) VALUES ($1, $2, $3) ON CONFLICT (run_id, chunk) DO UPDATE SET body = EXCLUDED.body", [runId, chunk, body]);
  }

  async getUndoChunks(runId: string): Promise<Buffer[]> {
    const result = await this.pool.query<{ body: Buffer }>("SELECT body FROM undo_journal WHERE run_id = $1 ORDER BY chunk", [runId]);
    return result.rows.map((r) => r.body);
  }

  async getMetadata(automation: string): Promise<Record<string, unknown>> {
    const { rows } = await this.pool.query<{ body: Record<string, unknown> }>("SELECT body FROM metadata WHERE automation = $1", [automation]);
    return rows[0]?.body ?? {};
  }

  async setMetadata(automation: string, metadata: Record<string, unknown>): Promise<void> {
    await this.pool.query("INSERT INTO metadata (automation, body) VALUES ($1, $2) ON CONFLICT (automation) DO UPDATE SET body = excluded.body", [
      automation,
      JSON.stringify(metadata),
    ]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
