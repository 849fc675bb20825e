/**
 * The records a product apply failed, and why, in the run's work database:
 * a feed the service refuses fails every row, too many to hold in memory,
 * and the commit asks of each record whether it failed.
 *
 * @module
 */

import type Database from "better-sqlite3";
import type { FailedRecords } from "../apply-journal.js";

export class WorkFailures implements FailedRecords {
  private readonly insert: Database.Statement;
  private readonly find: Database.Statement;
  private pending: Array<[string, string]> = [];
  private count = 0;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare("INSERT OR IGNORE INTO failed (identifier, message) VALUES (?, ?)");
    this.find = db.prepare("SELECT 1 FROM failed WHERE identifier = ?").pluck();
  }

  /** A record failed twice (a file's error after some of its rows were read) keeps its first message. */
  set(identifier: string, message: string): this {
    this.pending.push([identifier, message]);
    if (this.pending.length >= 2000) this.flush();
    return this;
  }

  /** Without a failure (the usual run) no query: the commit asks once per record. */
  has(identifier: string): boolean {
    this.flush();
    return this.count > 0 && this.find.get(identifier) !== undefined;
  }

  get size(): number {
    this.flush();
    return this.count;
  }

  /** In pages, so no statement stays open while the caller awaits between records. */
  *entries(pageSize = 1000): Generator<[string, string]> {
    this.flush();
    if (this.count === 0) return;
    const page = this.db.prepare("SELECT seq, identifier, message FROM failed WHERE seq > ? ORDER BY seq LIMIT ?");
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ seq: number; identifier: string; message: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      for (const r of rows) yield [r.identifier, r.message];
    }
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const ids = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const [id, message] of ids) this.count += this.insert.run(id, message).changes;
    })();
  }
}
