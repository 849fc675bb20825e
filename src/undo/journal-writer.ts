/**
 * The undo journal a live product import writes (issue 33): each planned
 * change goes through `sink`, which passes it on to the op writer and keeps
 * its journal entry; the entries are cut into gzip'd chunks, and `flush`
 * stores the chunks before a pass sends its first bulk file, so a run killed
 * between apply and commit still leaves its journal.
 *
 * @module
 */

import type { PlannedOp } from "../pipeline/planned-op.js";
import type { StateStore } from "../state/index.js";
import { encodeChunk, entryLine, entryOf, type JournalEntry } from "./journal-entry.js";

/** Entries per chunk: a chunk gzips to some hundreds of kilobytes at most. */
const CHUNK_ENTRIES = 5000;

/** Where planned operations go (the planner's OpSink). */
export interface JournalOpSink {
  add(op: PlannedOp): Promise<void> | undefined;
}

/** `CONVEYOR_UNDO_JOURNAL=0` turns the journal off (the bench compares the live load with and without it). */
export function journalEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CONVEYOR_UNDO_JOURNAL !== "0";
}

export class UndoJournalWriter {
  /**
   * The entries not yet cut, as their lines. An entry's identifier and values
   * are slices of the feed's decoded text, and a slice keeps the whole piece
   * it was cut from (up to 64 KB) alive: kept as objects, the 5,000 entries
   * of a chunk held 130 MB of a million-row diff run's feed.
   */
  private lines: string[] = [];
  private readonly chunks: Buffer[] = [];
  private stored = 0;
  private storedCount = 0;
  /** Entries kept in all, and their gzip'd bytes once stored. */
  count = 0;
  bytes = 0;

  constructor(
    private readonly store: StateStore,
    private readonly runId: string,
  ) {}

  /**
   * Wraps the op writer of file config `config`. `removed` gives the scope's
   * record of an identifier the run ends or deletes.
   */
  sink(config: number, inner: JournalOpSink, removed: (identifier: string) => Record<string, string> | undefined): JournalOpSink {
    return {
      add: (op) => {
        const entry = entryOf(config, op, op.kind === "remove" ? removed(op.identifier) : undefined);
        if (entry) this.keep(entry);
        return inner.add(op);
      },
    };
  }

  /**
   * A feed planned a second time (it repeats an identifier): what the first
   * plan kept goes. Passes plan and apply one after the other, so whatever is
   * not stored yet is the current pass's.
   */
  discard(): void {
    this.lines = [];
    this.chunks.length = 0;
    this.count = this.storedCount;
  }

  /** An entry made apart from `sink` (a live diff run's, once its values before are read: late-before.ts). */
  add(entry: JournalEntry): void {
    this.keep(entry);
  }

  private keep(entry: JournalEntry): void {
    this.lines.push(entryLine(entry));
    this.count++;
    if (this.lines.length >= CHUNK_ENTRIES) this.cut();
  }

  private cut(): void {
    if (this.lines.length === 0) return;
    this.chunks.push(encodeChunk(this.lines));
    this.lines = [];
  }

  /** Stores every chunk not stored yet; called before a pass sends its bulk files. */
  async flush(): Promise<void> {
    this.cut();
    while (this.chunks.length) {
      const body = this.chunks.shift();
      if (!body) break;
      await this.store.putUndoChunk(this.runId, this.stored, body);
      this.stored++;
      this.bytes += body.length;
    }
    this.storedCount = this.count;
  }

  get chunksStored(): number {
    return this.stored;
  }
}
