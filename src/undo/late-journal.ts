/**
 * The undo journal of a live diff run. Its scope reads only what matching,
 * diffing, service actions and change limits need, as the run without the
 * journal does; the values before of the few records the plan changes are
 * read after the plan, by identifier, with the fields the journal keeps
 * (every mapped field, `listed`). Each entry is then what it would have been
 * had the scope read them: the same values before, the same fields found
 * already held (`same`, which the run counts), the same record of an `end`.
 *
 * @module
 */

import type { ServiceClient } from "../service/index.js";
import { quoteSearchValue } from "../search/index.js";
import { sameValue } from "../pipeline/import/diff.js";
import type { JournalTable } from "../pipeline/import/journal-table.js";
import type { SameCounts } from "../pipeline/import/plan.js";
import type { WorkDb } from "../pipeline/import/workdb.js";
import type { FieldChange, PlannedOp } from "../pipeline/planned-op.js";
import { entryOf } from "./journal-entry.js";
import type { JournalOpSink, UndoJournalWriter } from "./journal-writer.js";

/** Identifiers one export names at most, and the most text its search may take once form-encoded. */
export const LOOKUP_IDS = 2000;
const LOOKUP_CHARS = 60_000;
/** Past this share of the scope, one export of the whole scope costs less than exports by identifier. */
const WHOLE_SCOPE_SHARE = 0.2;

export interface LateJournalOptions {
  writer: UndoJournalWriter;
  /** The file config's index, as the journal's entries name it. */
  config: number;
  client: ServiceClient;
  work: WorkDb;
  identifier: string;
  /** The file config's `search`: the scope, read whole when most of it changed. */
  search: string;
  /** The fields the journal keeps of a record (the scope's of a run that reads them all). */
  fields: readonly string[];
  /** The fields the scope did read: an update's changes of these already carry their value before. */
  read: ReadonlySet<string>;
  signal?: AbortSignal | undefined;
}

export class LateJournal {
  private readonly table: JournalTable;

  constructor(private readonly o: LateJournalOptions) {
    this.table = o.work.journal();
  }

  /** Passes each operation on to `inner`, and holds it until `finish` when it changes something. */
  sink(inner: JournalOpSink): JournalOpSink {
    return {
      add: (op) => {
        // An entry can only lose fields once the values before are in: one that is null now stays null.
        if (entryOf(this.o.config, op, undefined) !== null) this.table.add(op, this.needsRecord(op));
        return inner.add(op);
      },
    };
  }

  /** The feed is planned a second time: what the first plan held goes. */
  discard(): void {
    this.table.clear();
  }

  /**
   * Reads the records the held operations need, hands their entries to the
   * writer in plan order, and returns what the plan's `same` counts gain.
   */
  async finish(scopeSize: number): Promise<SameCounts> {
    const gained: SameCounts = { same_fields: 0, same: 0 };
    const wide = this.table.wideCount();
    if (wide > 0) await (wide > scopeSize * WHOLE_SCOPE_SHARE ? this.readScope() : this.readByIdentifier());
    for (const page of this.table.held()) {
      for (const { op, record } of page) {
        if (op.kind === "update" && record) this.fill(op, record, gained);
        const removed = op.kind === "remove" ? (record ?? this.o.work.scopeLookup([op.identifier], false).get(op.identifier)) : undefined;
        const entry = entryOf(this.o.config, op, removed);
        if (entry) this.o.writer.add(entry);
      }
    }
    this.table.clear();
    return gained;
  }

  private needsRecord(op: PlannedOp): boolean {
    if (op.kind === "remove") return true;
    return op.kind === "update" && op.changes.some((c) => !this.o.read.has(c.field));
  }

  /** A change of a field the scope did not read takes the record's value before, and `same` as the plan marks it. */
  private fill(op: PlannedOp, record: Record<string, string>, gained: SameCounts): void {
    const before = sameCount(op.changes);
    for (const change of op.changes) {
      const held = this.o.read.has(change.field) ? undefined : record[change.field];
      if (held === undefined) continue;
      change.before = held;
      change.same = held === change.after || sameValue(held, change.after);
    }
    const after = sameCount(op.changes);
    gained.same_fields += after - before;
    const all = (n: number): number => (n > 0 && n === op.changes.length ? 1 : 0);
    gained.same += all(after) - all(before);
  }

  private async readByIdentifier(): Promise<void> {
    for (const ids of this.table.wideIdentifiers(LOOKUP_IDS)) {
      const wanted = new Set(ids);
      for (const search of lookupSearches(this.o.identifier, ids)) await this.read(search, (id) => wanted.has(id));
    }
  }

  private async readScope(): Promise<void> {
    await this.read(this.o.search, null);
  }

  /** `wanted` null: the rows are those of the whole scope, and only those the table waits for are kept. */
  private async read(search: string, wanted: ((identifier: string) => boolean) | null): Promise<void> {
    const { client, identifier, fields, signal } = this.o;
    for await (const rows of client.exportRecordPages({ type: "items", search, fields: [...fields], signal }, { signal })) {
      const batch: Array<{ identifier: string; values: Record<string, string> }> = [];
      for (const row of rows) {
        const id = row[identifier];
        if (id !== undefined && id !== "") batch.push({ identifier: id, values: row });
      }
      if (wanted) {
        // The service's search compares more loosely than the scope's keys (case, spaces): only exact identifiers count.
        this.table.addRecords(batch, wanted);
      } else {
        const waiting = this.table.waitsFor(batch.map((r) => r.identifier));
        this.table.addRecords(batch, (id) => waiting.has(id));
      }
    }
  }
}

function sameCount(changes: readonly FieldChange[]): number {
  let n = 0;
  for (const c of changes) if (c.same === true) n++;
  return n;
}

/** `(guid:=A guid:=B …)`, cut so that no search outgrows what a service takes in one request. */
export function lookupSearches(field: string, ids: readonly string[]): string[] {
  const searches: string[] = [];
  let terms: string[] = [];
  let chars = 0;
  const cut = (): void => {
    if (terms.length) searches.push(terms.length === 1 ? (terms[0] ?? "") : `(${terms.join(" ")})`);
    terms = [];
    chars = 0;
  };
  for (const id of ids) {
    const term = `${quoteSearchValue(field)}:=${quoteSearchValue(id)}`;
    const size = encodeURIComponent(term).length + 3;
    if (chars + size > LOOKUP_CHARS) cut();
    terms.push(term);
    chars += size;
  }
  cut();
  return searches;
}
