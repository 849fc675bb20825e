/**
 * The inserts of a scope read into the work database. The scope table is a
 * B-tree keyed by identifier, and a service may export its records in an
 * order of its own (by internal id, whatever the identifiers): inserts in
 * no order touch its pages all over, where inserts in order only append.
 * So rows go into the scope table while their identifiers ascend; from the
 * first one out of order on, they wait in a plain table in the order they
 * came, and `end` moves them into the scope sorted by SQLite's sorter (the
 * rows of one identifier in the order they came, so the last one wins, as
 * it does among the inserts).
 *
 * @module
 */

import type Database from "better-sqlite3";
import type { ScopeValues } from "./scope-values.js";

/** Rows a statement: one row a statement spends most of a big scope's time on the cost of each call. */
const SCOPE_ROWS = 100;

export interface ScopeEntry {
  identifier: string;
  values: Record<string, string>;
}

export class ScopeRows {
  private readonly intoScope: [Database.Statement, Database.Statement];
  private readonly intoRest: [Database.Statement, Database.Statement];
  private last = "";
  /** A row came out of identifier order: the rest waits in `scope_rest`. */
  private scattered = false;

  constructor(
    private readonly db: Database.Database,
    private readonly codec: ScopeValues,
  ) {
    db.exec(`CREATE TABLE scope_rest (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL, ord INTEGER NOT NULL, "values" TEXT NOT NULL)`);
    const statements = (into: string): [Database.Statement, Database.Statement] => [
      db.prepare(`${into} VALUES ${new Array(SCOPE_ROWS).fill("(?, ?, ?)").join(", ")}`),
      db.prepare(`${into} VALUES (?, ?, ?)`),
    ];
    this.intoScope = statements(`INSERT OR REPLACE INTO scope (identifier, ord, "values")`);
    this.intoRest = statements(`INSERT INTO scope_rest (identifier, ord, "values")`);
  }

  /** Inserts `entries`, the first with ordinal `ordinal` and each next one the next. */
  add(entries: readonly ScopeEntry[], ordinal: number): void {
    let cut = entries.length;
    if (!this.scattered) {
      for (let i = 0; i < entries.length; i++) {
        const id = entries[i]?.identifier ?? "";
        if (id < this.last) {
          cut = i;
          this.scattered = true;
          break;
        }
        this.last = id;
      }
    } else cut = 0;
    this.db.transaction(() => {
      this.insert(this.intoScope, entries, 0, cut, ordinal);
      this.insert(this.intoRest, entries, cut, entries.length, ordinal);
    })();
  }

  private insert([many, one]: [Database.Statement, Database.Statement], entries: readonly ScopeEntry[], from: number, to: number, ordinal: number): void {
    let at = from;
    for (; at + SCOPE_ROWS <= to; at += SCOPE_ROWS) many.run(this.params(entries, at, SCOPE_ROWS, ordinal));
    for (; at < to; at++) one.run(this.params(entries, at, 1, ordinal));
  }

  /** Each row's identifier, its ordinal (its byte in the `seen` marks) and values. */
  private params(entries: readonly ScopeEntry[], from: number, count: number, ordinal: number): Array<string | number> {
    const params: Array<string | number> = [];
    for (let i = from; i < from + count; i++) {
      const e = entries[i];
      if (e) params.push(e.identifier, ordinal + i, this.codec.encode(e.values));
    }
    return params;
  }

  /** The scope read is done: the rows that waited join the scope, in identifier order. */
  end(): void {
    if (!this.scattered) return;
    this.db.exec(`INSERT OR REPLACE INTO scope (identifier, ord, "values") SELECT identifier, ord, "values" FROM scope_rest ORDER BY identifier, seq; DELETE FROM scope_rest`);
    this.scattered = false;
    this.last = "";
  }

  /** Every identifier inserted so far, in pages (those that wait too): a row at a time through iterate() cost three times as much. */
  *identifiers(): Generator<string[]> {
    const scope = this.db.prepare("SELECT identifier FROM scope WHERE identifier > ? ORDER BY identifier LIMIT 4096").pluck();
    for (let after = ""; ; ) {
      const rows = scope.all(after) as string[];
      if (rows.length === 0) break;
      yield rows;
      after = rows[rows.length - 1] ?? after;
    }
    const rest = this.db.prepare("SELECT seq, identifier FROM scope_rest WHERE seq > ? ORDER BY seq LIMIT 4096").raw();
    for (let after = 0; ; ) {
      const rows = rest.all(after) as Array<[number, string]>;
      const tail = rows[rows.length - 1];
      if (!tail) return;
      yield rows.map(([, identifier]) => identifier);
      after = tail[0];
    }
  }
}
