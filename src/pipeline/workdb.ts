import Database from "better-sqlite3";

/**
 * A run's scratch database, a SQLite file in its work folder. It holds the
 * mapped records (last row of an identifier wins) and the scope the service
 * returned, so a million-row feed is matched and diffed without holding it
 * in memory. It is thrown away with the work folder.
 */
export interface IncomingRow {
  seq: number;
  identifier: string;
  line: number;
  values: Record<string, string>;
  ignored: string[];
  service: Record<string, string> | undefined;
}

/** Almost no record has ignored fields: the common case is neither encoded nor parsed. */
const NONE = "[]";

export class WorkDb {
  private readonly db: Database.Database;
  private readonly insertNew: Database.Statement;
  private readonly replaceOld: Database.Statement;
  private readonly insertScope: Database.Statement;
  private readonly updatePlanned: Database.Statement;
  private pending: Array<[string, number, string, string]> = [];
  private merged = 0;

  constructor(file: string) {
    this.db = new Database(file);
    // Scratch data: durability is worthless here, speed is not.
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.exec(`
      CREATE TABLE incoming (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE, line INTEGER NOT NULL, "values" TEXT NOT NULL, ignored TEXT NOT NULL,
        kind TEXT, final TEXT);
      CREATE TABLE scope (identifier TEXT PRIMARY KEY, "values" TEXT NOT NULL) WITHOUT ROWID;`);
    this.insertNew = this.db.prepare(`INSERT OR IGNORE INTO incoming (identifier, line, "values", ignored) VALUES (?, ?, ?, ?)`);
    this.replaceOld = this.db.prepare(`REPLACE INTO incoming (identifier, line, "values", ignored) VALUES (?, ?, ?, ?)`);
    this.insertScope = this.db.prepare(`INSERT OR REPLACE INTO scope (identifier, "values") VALUES (?, ?)`);
    this.updatePlanned = this.db.prepare("UPDATE incoming SET kind = ?, final = ? WHERE seq = ?");
  }

  /** Buffered: call `flush()` (or read) before relying on the rows. */
  addIncoming(identifier: string, line: number, values: Record<string, string>, ignored: ReadonlySet<string>): void {
    this.pending.push([identifier, line, JSON.stringify(values), ignored.size === 0 ? NONE : JSON.stringify([...ignored])]);
    if (this.pending.length >= 2000) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const row of rows) {
        if (this.insertNew.run(...row).changes === 0) {
          // The same identifier again: the last row wins, and takes the later position.
          this.replaceOld.run(...row);
          this.merged++;
        }
      }
    })();
  }

  /** Rows that shared an identifier with an earlier row (the last one won). */
  get mergedRows(): number {
    this.flush();
    return this.merged;
  }

  incomingCount(): number {
    this.flush();
    return (this.db.prepare("SELECT count(*) AS n FROM incoming").get() as { n: number }).n;
  }

  addScope(entries: Iterable<{ identifier: string; values: Record<string, string> }>): number {
    let n = 0;
    this.db.transaction(() => {
      for (const e of entries) {
        this.insertScope.run(e.identifier, JSON.stringify(e.values));
        n++;
      }
    })();
    return n;
  }

  scopeCount(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM scope").get() as { n: number }).n;
  }

  /** Mapped records in file order, with the service's record when in scope, in pages. */
  *incomingPages(pageSize = 1000): Generator<IncomingRow[]> {
    this.flush();
    const page = this.db.prepare(
      `SELECT i.seq, i.identifier, i.line, i."values" AS v, i.ignored, s."values" AS svc
       FROM incoming i LEFT JOIN scope s ON s.identifier = i.identifier WHERE i.seq > ? ORDER BY i.seq LIMIT ?`,
    );
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ seq: number; identifier: string; line: number; v: string; ignored: string; svc: string | null }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({
        seq: r.seq,
        identifier: r.identifier,
        line: r.line,
        values: JSON.parse(r.v) as Record<string, string>,
        ignored: r.ignored === NONE ? [] : (JSON.parse(r.ignored) as string[]),
        service: r.svc === null ? undefined : (JSON.parse(r.svc) as Record<string, string>),
      }));
    }
  }

  /** What the plan decided per record, and the values after service actions when they changed them. */
  setPlanned(entries: ReadonlyArray<{ seq: number; kind: string; final: Record<string, string> | null }>): void {
    const stmt = this.updatePlanned;
    this.db.transaction(() => {
      for (const e of entries) stmt.run(e.kind, e.final === null ? null : JSON.stringify(e.final), e.seq);
    })();
  }

  /** Records whose values the snapshot should take once applied: created, updated and unchanged ones. */
  *committable(pageSize = 1000): Generator<Array<{ identifier: string; values: Record<string, string> }>> {
    const page = this.db.prepare(
      `SELECT seq, identifier, coalesce(final, "values") AS v FROM incoming
       WHERE kind IN ('create', 'update', 'unchanged') AND seq > ? ORDER BY seq LIMIT ?`,
    );
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ seq: number; identifier: string; v: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({ identifier: r.identifier, values: JSON.parse(r.v) as Record<string, string> }));
    }
  }

  /** Records in scope that the file does not mention: the removal candidates. */
  *unmentioned(pageSize = 1000): Generator<string[]> {
    this.flush();
    const page = this.db.prepare(
      `SELECT s.identifier FROM scope s WHERE s.identifier > ? AND NOT EXISTS (SELECT 1 FROM incoming i WHERE i.identifier = s.identifier)
       ORDER BY s.identifier LIMIT ?`,
    );
    let after = "";
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ identifier: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.identifier ?? after;
      yield rows.map((r) => r.identifier);
    }
  }

  close(): void {
    this.db.close();
  }
}
