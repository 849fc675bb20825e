/**
 * The export snapshot (runs.md, "Diffing"): snapshot identifier → a hash of
 * the row's exported values, per automation and file config, under a key of
 * its own (`<automation>#export#<index>`) so it never mixes with an import's.
 *
 * Rows are classified a batch at a time (one `snapshotGet` per batch, never a
 * map of the whole catalogue). What the run will commit is staged in a file
 * next to the rendered one and written to the snapshot only after a
 * successful live delivery; a failed or debug run leaves it as it was.
 *
 * Orders are different on purpose: an order is an instruction to a partner
 * (ship this), so a diff run sends an order the snapshot has seen as
 * delivered never again, even when a value changed since. Its identifier in
 * the snapshot is the order, whatever its rows are (line items).
 *
 * @module
 */

import { hash } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { SNAPSHOT_PUT_ENTRIES, type SnapshotText } from "../../state/snapshot-entry.js";
import type { StateStore } from "../../state/types.js";
import { SortedEntries } from "./sorted-entries.js";

export type Change = "create" | "update" | "unchanged";

export interface DiffRow {
  key: string;
  group: string;
  hash: string;
}

export function exportSnapshotKey(automationKey: string, index: number): string {
  return `${automationKey}#export#${index}`;
}

/** Values joined with a unit separator, so `a,b|c` and `a|b,c` never hash alike. */
export function rowHash(values: readonly string[]): string {
  // One-shot hashing: a Hash object per row cost a million-row export a second.
  return joinedHash(values.join("\u001f"));
}

/** `rowHash` of values already joined (the render thread receives them so). */
export function joinedHash(joined: string): string {
  return hash("sha1", joined, "base64");
}

/** A staged row: `<hash> <identifier as JSON>`; the hash is base64, never a space; one JSON string, not an array, per row. */
export function stageLine(hash: string, id: string): string {
  return `${hash} ${JSON.stringify(id)}\n`;
}

/**
 * The staged file's lines, a read's worth at a time: readline's promise per
 * line was a large part of reading a million of them back.
 */
async function* stagedLines(file: string): AsyncGenerator<string[]> {
  let rest = "";
  // A utf8 stream decodes a character cut between two reads whole. Reads of the
  // default size: a text of a megabyte is a large object, which only a full collection frees.
  for await (const chunk of createReadStream(file, { encoding: "utf8" })) {
    const lines = (rest + (chunk as string)).split("\n");
    rest = lines.pop() ?? "";
    yield lines;
  }
  if (rest !== "") yield [rest];
}

/**
 * The identifier of a staged line, its JSON text starting at `from`.
 * JSON.stringify escapes every character it must with a backslash, so a
 * text without one is the identifier between its quotes: no JSON.parse.
 */
export function stagedIdentifier(line: string, from: number): string {
  return line.includes("\\", from) ? (JSON.parse(line.slice(from)) as string) : line.slice(from + 1, -1);
}

export interface ExportSnapshotOptions {
  store: StateStore;
  key: string;
  /** A diff run sends only new and changed rows; a full run sends all and leaves a fresh snapshot. */
  diff: boolean;
  /** Orders: delivered once, keyed by order. */
  deliveredOnce: boolean;
  stagePath: string;
}

export class ExportSnapshot {
  // Opened at the first staged row: a pass that hands its staging to the render thread never opens it here.
  private out: WriteStream | null = null;
  private closed: Promise<unknown> = Promise.resolve();
  staged = 0;

  constructor(private readonly options: ExportSnapshotOptions) {}

  /** Where the rows are staged, for the render thread that stages them from now on. */
  get stagePath(): string {
    return this.options.stagePath;
  }

  /** Rows the render thread staged in `stagePath`. */
  addStaged(rows: number): void {
    this.staged += rows;
  }

  /** The snapshot identifier of a row. */
  id(row: DiffRow): string {
    return this.options.deliveredOnce ? row.group : row.key;
  }

  /** One decision per row, in order; a full run calls every row `create`. */
  async classify(rows: readonly DiffRow[]): Promise<Change[]> {
    if (!this.options.diff) return rows.map(() => "create");
    const ids = [...new Set(rows.map((r) => this.id(r)))];
    const known = await this.options.store.snapshotGet(this.options.key, ids);
    return rows.map((row) => {
      const before = known.get(this.id(row));
      if (!before) return "create";
      if (this.options.deliveredOnce) return "unchanged";
      return before.h === row.hash ? "unchanged" : "update";
    });
  }

  /** Remembers a row that goes out, for the commit after delivery. */
  async stage(row: DiffRow): Promise<void> {
    await this.stageMany([row]);
  }

  /** Remembers a batch of rows that go out: one write, not one per row. */
  async stageMany(rows: readonly DiffRow[]): Promise<void> {
    if (!rows.length) return;
    this.staged += rows.length;
    let text = "";
    for (const row of rows) text += stageLine(row.hash, this.id(row));
    if (!this.out) {
      this.out = createWriteStream(this.options.stagePath);
      this.closed = once(this.out, "close");
    }
    if (!this.out.write(text)) await once(this.out, "drain");
  }

  async close(): Promise<void> {
    if (this.out && !this.out.closed) {
      this.out.end();
      await this.closed;
    }
  }

  /**
   * Step 7, after a successful live delivery: the staged rows go into the
   * snapshot, except those whose delivery failed (a diff run sends them
   * again). A full run then drops what it did not see. The store takes them
   * in identifier order: from the first row out of it on, the rest is sorted
   * first (sorted-entries.ts). `onCommitted` is told the identifiers of
   * each put, and may return a promise (the log writer's): the commit
   * waits for it before the next.
   */
  async commit(failed: ReadonlySet<string>, onCommitted?: (identifiers: readonly string[]) => Promise<void> | undefined): Promise<number> {
    await this.close();
    const { store, key } = this.options;
    // The store stamps entries with its own clock; prune by the same clock.
    const started = new Date().toISOString();
    let batch: SnapshotText[] = [];
    let committed = 0;
    const put = async (entries: SnapshotText[]): Promise<void> => {
      const logged = onCommitted?.(entries.map((e) => e.identifier));
      await store.snapshotPut(key, entries);
      if (logged) await logged;
      committed += entries.length;
    };
    // Rows in identifier order go straight to the store; from the first row out of it on, they are sorted first.
    let last = "";
    let sorted: SortedEntries | null = null;
    // Nothing staged, no file: a full run still drops what it did not see.
    const chunks = this.staged === 0 ? [] : stagedLines(this.options.stagePath);
    try {
      for await (const lines of chunks) {
        for (const line of lines) {
          if (line === "") continue;
          const space = line.indexOf(" ");
          const identifier = stagedIdentifier(line, space + 1);
          if (failed.has(identifier)) continue;
          if (identifier < last && !sorted) {
            if (batch.length) await put(batch);
            batch = [];
            sorted = new SortedEntries(`${this.options.stagePath}.sort`);
          }
          last = identifier;
          // The values { h } as JSON, without an object a row.
          batch.push({ identifier, valuesText: `{"h":${JSON.stringify(line.slice(0, space))}}` });
          if (batch.length < SNAPSHOT_PUT_ENTRIES) continue;
          if (sorted) sorted.add(batch);
          else await put(batch);
          batch = [];
        }
      }
      if (sorted) {
        sorted.add(batch);
        for (const page of sorted.pages(SNAPSHOT_PUT_ENTRIES)) await put(page);
      } else if (batch.length) await put(batch);
    } finally {
      sorted?.close();
    }
    if (!this.options.diff) await store.snapshotPruneBefore(key, started);
    return committed;
  }

  async discard(): Promise<void> {
    await this.close();
    await rm(this.options.stagePath, { force: true });
  }
}
