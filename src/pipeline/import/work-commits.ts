/**
 * The values the snapshot takes once a live run is applied, held in the
 * run's work database until the apply is done. They go in as JSON text and
 * come out as that same text, which the store keeps as it is: a
 * million-record load parsed and wrote every record again on its way to the
 * snapshot. Rows are written a hundred a statement and many pages a
 * transaction: a statement per row and a transaction per planned page were
 * most of what the commits cost the plan.
 *
 * They come out in identifier order when they went in out of it (as a feed
 * of UUIDs does): the store's snapshot is a B-tree keyed by identifier, and
 * puts that touch its pages in no order cost it many times what the same
 * puts in order do. The sorted copy is made once, by SQLite's sorter, in a
 * table beside the first.
 *
 * @module
 */

import type Database from "better-sqlite3";
import { SNAPSHOT_PUT_ENTRIES, type SnapshotEntry, type SnapshotText } from "../../state/snapshot-entry.js";

const ROWS_PER_STATEMENT = 100;
const PARAMS_PER_ROW = 3;

/** Rows held before they are written: one transaction for this many. */
const BUFFER_ROWS = 2_000;


function insertSql(rows: number): string {
  return `INSERT INTO commits (identifier, "values", source) VALUES ${new Array(rows).fill("(?, ?, ?)").join(", ")}`;
}

export class WorkCommits {
  private readonly insertMany: Database.Statement;
  private readonly insertOne: Database.Statement;
  /** The parameters of the rows not yet written, three a row. */
  private pending: Array<string | null> = [];
  /** An entry came with an identifier below the one before it. */
  private unordered = false;
  private last = "";

  constructor(private readonly db: Database.Database) {
    this.insertMany = db.prepare(insertSql(ROWS_PER_STATEMENT));
    this.insertOne = db.prepare(insertSql(1));
  }

  /** Buffered: `pages` writes what is held first. */
  add(entries: readonly SnapshotEntry[]): void {
    const pending = this.pending;
    for (const e of entries) {
      pending.push(e.identifier, JSON.stringify(e.values), e.source ?? null);
      if (e.identifier < this.last) this.unordered = true;
      this.last = e.identifier;
    }
    if (pending.length >= BUFFER_ROWS * PARAMS_PER_ROW) this.flush();
  }

  private flush(): void {
    const params = this.pending;
    if (params.length === 0) return;
    this.pending = [];
    const statement = ROWS_PER_STATEMENT * PARAMS_PER_ROW;
    this.db.transaction(() => {
      let at = 0;
      for (; at + statement <= params.length; at += statement) this.insertMany.run(params.slice(at, at + statement));
      for (; at < params.length; at += PARAMS_PER_ROW) this.insertOne.run(params.slice(at, at + PARAMS_PER_ROW));
    })();
  }

  /**
   * The entries a store's put at a time: in the order they were added when
   * that was identifier order, or else sorted by identifier (the entries of
   * one identifier in the order they were added, so the last one wins). A
   * feed in runs of ascending identifiers that interleave is as scattered
   * for the store as one in no order: any descent sorts.
   */
  *pages(pageSize = SNAPSHOT_PUT_ENTRIES): Generator<SnapshotText[]> {
    this.flush();
    const sort = this.unordered;
    if (sort) this.db.exec(`DROP TABLE IF EXISTS sorted_commits; CREATE TABLE sorted_commits AS SELECT identifier, "values", source FROM commits ORDER BY identifier, seq`);
    const from = sort ? `SELECT rowid, identifier, "values", source FROM sorted_commits WHERE rowid > ? ORDER BY rowid` : `SELECT seq, identifier, "values", source FROM commits WHERE seq > ? ORDER BY seq`;
    const page = this.db.prepare(`${from} LIMIT ?`).raw();
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<[number, string, string, string | null]>;
      const last = rows[rows.length - 1];
      if (!last) return;
      after = last[0];
      yield rows.map(([, identifier, valuesText, source]) => ({ identifier, valuesText, source }));
    }
  }

  /** Forgets every entry, for a plan made again. */
  reset(): void {
    this.pending = [];
    this.unordered = false;
    this.last = "";
    this.db.exec("DELETE FROM commits; DROP TABLE IF EXISTS sorted_commits");
  }
}
