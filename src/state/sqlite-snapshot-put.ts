import type Database from "better-sqlite3";
import { snapshotValuesText, type SnapshotPutEntry } from "./snapshot-entry.js";

/**
 * Entries per INSERT statement: one statement with this many rows of bound
 * parameters costs SQLite less than one JSON text of a whole chunk that it
 * parses and takes apart again (json_each, ->>), and less than a statement
 * run per entry.
 */
const ROWS_PER_STATEMENT = 100;

/**
 * A statement's shape: whether its rows bind a source fingerprint each. The
 * key's number and the time are the put's, bound once per statement as
 * named parameters, not again on every row: each bound parameter is a step
 * of the add-on.
 */
type Shape = "sourced" | "unsourced";

function upsertSql(rows: number, shape: Shape): string {
  const row = shape === "sourced" ? "(@kid, ?, ?, @updated, ?)" : "(@kid, ?, ?, @updated, NULL)";
  return `INSERT INTO snapshot_entries (kid, identifier, "values", updated, source) VALUES ${Array.from({ length: rows }, () => row).join(", ")}
    ON CONFLICT (kid, identifier) DO UPDATE SET "values" = excluded."values", updated = excluded.updated, source = excluded.source`;
}

/** The statements of one shape: a full one and one for the last entries, and the parameters of a full one, refilled in place. */
class Upsert {
  private many: Database.Statement | undefined;
  private one: Database.Statement | undefined;
  private readonly perRow: number;
  private readonly params: unknown[];

  constructor(
    private readonly db: Database.Database,
    private readonly shape: Shape,
  ) {
    this.perRow = shape === "sourced" ? 3 : 2;
    this.params = new Array<unknown>(ROWS_PER_STATEMENT * this.perRow);
  }

  run(named: { kid: number; updated: number }, entries: readonly SnapshotPutEntry[]): void {
    const many = (this.many ??= this.db.prepare(upsertSql(ROWS_PER_STATEMENT, this.shape)));
    const one = (this.one ??= this.db.prepare(upsertSql(1, this.shape)));
    const { params, perRow } = this;
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= entries.length; i += ROWS_PER_STATEMENT) {
      for (let j = 0; j < ROWS_PER_STATEMENT; j++) this.fill(params, j * perRow, entries[i + j] as SnapshotPutEntry);
      many.run(params, named);
    }
    const last = new Array<unknown>(perRow);
    for (; i < entries.length; i++) {
      this.fill(last, 0, entries[i] as SnapshotPutEntry);
      one.run(last, named);
    }
  }

  private fill(params: unknown[], at: number, entry: SnapshotPutEntry): void {
    params[at] = entry.identifier;
    params[at + 1] = snapshotValuesText(entry);
    if (this.shape === "sourced") params[at + 2] = entry.source ?? null;
  }
}

/**
 * The SQLite store's snapshotPut: all entries in one transaction, in order,
 * so a later entry of an identifier wins (an upsert of a row sees the rows
 * the same statement inserted before it). A put none of whose entries has a
 * source (every export's) binds two parameters a row instead of three.
 */
export class SqliteSnapshotPut {
  private readonly sourced: Upsert;
  private readonly unsourced: Upsert;
  private readonly addKey: Database.Statement;
  private readonly kidOf: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.sourced = new Upsert(db, "sourced");
    this.unsourced = new Upsert(db, "unsourced");
    this.addKey = db.prepare("INSERT INTO snapshot_keys (key) VALUES (?) ON CONFLICT (key) DO NOTHING");
    this.kidOf = db.prepare("SELECT kid FROM snapshot_keys WHERE key = ?").pluck();
  }

  put(key: string, entries: readonly SnapshotPutEntry[]): void {
    const upsert = entries.some((e) => e.source != null) ? this.sourced : this.unsourced;
    this.db.transaction(() => {
      this.addKey.run(key);
      upsert.run({ kid: this.kidOf.get(key) as number, updated: Date.now() }, entries);
    })();
  }
}
