/**
 * The undo journal's operations of a live diff run, held in the run's work
 * database until the plan is done: the scope read only the fields the plan
 * needs, so an update's values before (and what an `end` takes off sale) are
 * read afterwards, for the records the plan changed, into `wide`; the entries
 * are then made in plan order from the two tables joined.
 *
 * @module
 */

import type Database from "better-sqlite3";
import type { PlannedOp } from "../planned-op.js";

/** An operation as it waits: `wide` when its entry needs the record as the service holds it. */
export interface HeldOp {
  op: PlannedOp;
  wide: boolean;
  /** The record read afterwards; undefined when it was not read (or the service no longer has it). */
  record: Record<string, string> | undefined;
}

const FLUSH_ROWS = 2000;

export class JournalTable {
  private readonly insertOp: Database.Statement;
  private readonly insertWide: Database.Statement;
  /**
   * Only the operations' JSON: an identifier is a slice of the feed's text, and a slice keeps the whole piece
   * it was cut from alive (a changed record every few pieces of the feed held most of them).
   */
  private pending: Array<[string, number]> = [];

  constructor(private readonly db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL, op TEXT NOT NULL, wide INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS wide (identifier TEXT PRIMARY KEY, "values" TEXT NOT NULL) WITHOUT ROWID;`);
    this.insertOp = db.prepare("INSERT INTO journal (identifier, op, wide) VALUES (json_extract(?, '$.identifier'), ?, ?)");
    this.insertWide = db.prepare(`INSERT OR REPLACE INTO wide (identifier, "values") VALUES (?, ?)`);
  }

  /** Buffered; the operation is copied (its strings are slices of the feed's text). */
  add(op: PlannedOp, wide: boolean): void {
    const { kind, action, identifier, changes } = op;
    this.pending.push([JSON.stringify({ kind, action, identifier, line: null, changes }), wide ? 1 : 0]);
    if (this.pending.length >= FLUSH_ROWS) this.flush();
  }

  /** Identifiers whose record is to be read, in pages (each once). */
  *wideIdentifiers(pageSize: number): Generator<string[]> {
    this.flush();
    yield* identifierPages(this.db.prepare("SELECT identifier FROM journal WHERE wide = 1 AND identifier > ? GROUP BY identifier ORDER BY identifier LIMIT ?"), pageSize);
  }

  wideCount(): number {
    this.flush();
    return (this.db.prepare("SELECT count(DISTINCT identifier) AS n FROM journal WHERE wide = 1").get() as { n: number }).n;
  }

  /** Keeps the records read for identifiers this table waits for; the others are dropped. */
  addRecords(rows: ReadonlyArray<{ identifier: string; values: Record<string, string> }>, wanted: (identifier: string) => boolean): void {
    this.db.transaction(() => {
      for (const row of rows) if (wanted(row.identifier)) this.insertWide.run(row.identifier, JSON.stringify(row.values));
    })();
  }

  /** Does an operation wait for this identifier's record? (For a read of the whole scope.) */
  waitsFor(identifiers: readonly string[]): Set<string> {
    if (identifiers.length === 0) return new Set();
    const found = this.db.prepare("SELECT DISTINCT identifier FROM journal WHERE wide = 1 AND identifier IN (SELECT value FROM json_each(?))").pluck();
    return new Set(found.all(JSON.stringify(identifiers)) as string[]);
  }

  /** The operations in plan order, with the records read for them. */
  *held(pageSize = 1000): Generator<HeldOp[]> {
    this.flush();
    const page = this.db.prepare(`SELECT j.seq, j.op, j.wide, w."values" AS v FROM journal AS j LEFT JOIN wide AS w ON j.wide = 1 AND w.identifier = j.identifier WHERE j.seq > ? ORDER BY j.seq LIMIT ?`);
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ seq: number; op: string; wide: number; v: string | null }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({ op: JSON.parse(r.op) as PlannedOp, wide: r.wide === 1, record: r.v === null ? undefined : (JSON.parse(r.v) as Record<string, string>) }));
    }
  }

  /** Forgets every operation and record (a feed planned a second time, or the entries made). */
  clear(): void {
    this.pending = [];
    this.db.exec("DELETE FROM journal; DELETE FROM wide;");
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const [op, wide] of rows) this.insertOp.run(op, op, wide);
    })();
  }
}

/**
 * Identifiers a statement lists in order, a page at a time: the statement
 * takes the last identifier of the page before and the page size
 * (`identifier > ? ORDER BY identifier LIMIT ?`), so no page is read twice.
 */
export function* identifierPages(statement: Database.Statement, pageSize: number): Generator<string[]> {
  const page = statement.pluck();
  let after = "";
  for (;;) {
    const ids = page.all(after, pageSize) as string[];
    if (ids.length === 0) return;
    after = ids[ids.length - 1] ?? after;
    yield ids;
  }
}
