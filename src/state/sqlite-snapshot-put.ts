import type Database from "better-sqlite3";
import { snapshotValuesText, type SnapshotPutEntry } from "./snapshot-entry.js";

/**
 * Entries per INSERT statement: one statement with this many rows of bound
 * parameters costs SQLite less than one JSON text of a whole chunk that it
 * parses and takes apart again (json_each, ->>), and less than a statement
 * run per entry.
 */
const ROWS_PER_STATEMENT = 100;
const PARAMS_PER_ROW = 5;

function upsertSql(rows: number): string {
  const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?)").join(", ");
  return `INSERT INTO snapshots (key, identifier, "values", updated, source) VALUES ${values}
    ON CONFLICT (key, identifier) DO UPDATE SET "values" = excluded."values", updated = excluded.updated, source = excluded.source`;
}

/**
 * The SQLite store's snapshotPut: all entries in one transaction, in order,
 * so a later entry of an identifier wins (an upsert of a row sees the rows
 * the same statement inserted before it).
 */
export class SqliteSnapshotPut {
  private many: Database.Statement | undefined;
  private one: Database.Statement | undefined;
  // Reused for every full statement: the parameters of one statement, refilled in place.
  private readonly params: unknown[] = new Array<unknown>(ROWS_PER_STATEMENT * PARAMS_PER_ROW);

  constructor(private readonly db: Database.Database) {}

  put(key: string, entries: readonly SnapshotPutEntry[]): void {
    const now = new Date().toISOString();
    const many = (this.many ??= this.db.prepare(upsertSql(ROWS_PER_STATEMENT)));
    const one = (this.one ??= this.db.prepare(upsertSql(1)));
    const params = this.params;
    this.db.transaction(() => {
      let i = 0;
      for (; i + ROWS_PER_STATEMENT <= entries.length; i += ROWS_PER_STATEMENT) {
        for (let j = 0; j < ROWS_PER_STATEMENT; j++) {
          const e = entries[i + j] as SnapshotPutEntry;
          const at = j * PARAMS_PER_ROW;
          params[at] = key;
          params[at + 1] = e.identifier;
          params[at + 2] = snapshotValuesText(e);
          params[at + 3] = now;
          params[at + 4] = e.source ?? null;
        }
        many.run(params);
      }
      // The last entries, fewer than a statement's rows.
      for (; i < entries.length; i++) {
        const e = entries[i] as SnapshotPutEntry;
        one.run(key, e.identifier, snapshotValuesText(e), now, e.source ?? null);
      }
    })();
  }
}
