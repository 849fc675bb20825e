/**
 * Snapshot entries that came out of identifier order, held in a SQLite file
 * of their own and given back sorted by SQLite's sorter. The store's
 * snapshot is a B-tree keyed by identifier: puts that touch its pages in no
 * order (an export of UUID-keyed products in the service's own order) cost
 * it many times what the same puts in order do.
 *
 * @module
 */

import { rmSync } from "node:fs";
import type Database from "better-sqlite3";
import { openScratchSqlite } from "../../scratch-sqlite.js";
import type { SnapshotText } from "../../state/snapshot-entry.js";

const ROWS_PER_STATEMENT = 100;

function insertSql(rows: number): string {
  return `INSERT INTO entries (identifier, "values") VALUES ${new Array(rows).fill("(?, ?)").join(", ")}`;
}

export class SortedEntries {
  private readonly db: Database.Database;
  private readonly many: Database.Statement;
  private readonly one: Database.Statement;

  /** `file` is created afresh and removed by `close`. */
  constructor(private readonly file: string) {
    rmSync(file, { force: true });
    this.db = openScratchSqlite(file);
    this.db.exec(`CREATE TABLE entries (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL, "values" TEXT NOT NULL)`);
    this.many = this.db.prepare(insertSql(ROWS_PER_STATEMENT));
    this.one = this.db.prepare(insertSql(1));
  }

  add(entries: readonly SnapshotText[]): void {
    this.db.transaction(() => {
      let at = 0;
      const params: string[] = [];
      for (; at + ROWS_PER_STATEMENT <= entries.length; at += ROWS_PER_STATEMENT) {
        params.length = 0;
        for (let i = at; i < at + ROWS_PER_STATEMENT; i++) {
          const e = entries[i];
          if (e) params.push(e.identifier, e.valuesText);
        }
        this.many.run(params);
      }
      for (; at < entries.length; at++) {
        const e = entries[at];
        if (e) this.one.run(e.identifier, e.valuesText);
      }
    })();
  }

  /** Every entry added, sorted by identifier (those of one identifier in the order they were added, so the last wins). */
  *pages(pageSize: number): Generator<SnapshotText[]> {
    this.db.exec(`CREATE TABLE sorted AS SELECT identifier, "values" FROM entries ORDER BY identifier, seq`);
    const page = this.db.prepare(`SELECT rowid, identifier, "values" FROM sorted WHERE rowid > ? ORDER BY rowid LIMIT ?`).raw();
    for (let after = 0; ; ) {
      const rows = page.all(after, pageSize) as Array<[number, string, string]>;
      const last = rows[rows.length - 1];
      if (!last) return;
      after = last[0];
      yield rows.map(([, identifier, valuesText]) => ({ identifier, valuesText }));
    }
  }

  close(): void {
    this.db.close();
    rmSync(this.file, { force: true });
  }
}
