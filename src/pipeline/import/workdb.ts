/**
 * A run's scratch database, a SQLite file in its work folder, thrown away
 * with the work folder. It holds the scope the service returned (looked up
 * by identifier as the feed streams past, and marked when the feed mentions
 * a record, for removals), the values the snapshot takes once a live run is
 * applied, the row errors and skip logs of the plan until the plan is known
 * to stand, and, only for a feed that repeats identifiers, the mapped
 * records (last row of an identifier wins).
 *
 * @module
 */

import type Database from "better-sqlite3";
import { openScratchSqlite } from "../../scratch-sqlite.js";
import type { SnapshotEntry, SnapshotText } from "../../state/snapshot-entry.js";
import type { FailedRecords } from "../apply-journal.js";
import { JournalTable } from "./journal-table.js";
import { WorkCommits } from "./work-commits.js";
import { WorkFailures } from "./work-failures.js";
import { ScopeValues } from "./scope-values.js";
import { ScopeRows, type ScopeEntry } from "./scope-rows.js";
import { HeldScope, type ScopeMarks } from "./held-scope.js";

export interface IncomingRow {
  seq: number;
  identifier: string;
  line: number;
  values: Record<string, string>;
  ignored: ReadonlySet<string>;
}

export interface DeferredEvent {
  kind: "error" | "skip";
  line: number | null;
  identifier: string;
  message: string;
}

/** Almost no record has ignored fields: the common case is neither encoded nor parsed. */
const NONE = "[]";
const NO_IGNORED: ReadonlySet<string> = new Set<string>();

export class WorkDb {
  private readonly db: Database.Database;
  private readonly insertNew: Database.Statement;
  private readonly replaceOld: Database.Statement;
  private readonly findScope: Database.Statement;
  private readonly findScopeOrd: Database.Statement;
  private readonly findScopeAt: Database.Statement;
  private readonly findScopeOrds: Database.Statement;
  private readonly insertDeferred: Database.Statement;
  private readonly insertWaiting: Database.Statement;
  private pending: Array<[string, number, string, string]> = [];
  private merged = 0;
  /**
   * Which scope records the feed mentioned, a byte per scope row by its
   * ordinal: marking them in SQLite rewrote every mentioned row of the
   * scope, most of the cost of a diff run's settle; a lookup alone reads.
   */
  private seen = new Uint8Array(0);
  private scopeRows = 0;
  private readonly scopeValues = new ScopeValues();
  private readonly commits: WorkCommits;
  private marks: ScopeMarks | null = null;
  private readonly scopeInserts: ScopeRows;
  private readonly held: HeldScope = new HeldScope();

  constructor(file: string) {
    this.db = openScratchSqlite(file);
    this.db.exec(`
      CREATE TABLE incoming (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE, line INTEGER NOT NULL, "values" TEXT NOT NULL, ignored TEXT NOT NULL);
      CREATE TABLE scope (identifier TEXT PRIMARY KEY, ord INTEGER NOT NULL, "values" TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE commits (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL, "values" TEXT NOT NULL, source TEXT);
      CREATE TABLE deferred (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, line INTEGER, identifier TEXT NOT NULL, message TEXT NOT NULL);
      CREATE TABLE failed (seq INTEGER PRIMARY KEY, identifier TEXT NOT NULL UNIQUE, message TEXT NOT NULL);
      CREATE TABLE waiting (seq INTEGER PRIMARY KEY, count INTEGER NOT NULL, list TEXT NOT NULL);`);
    this.insertNew = this.db.prepare(`INSERT OR IGNORE INTO incoming (identifier, line, "values", ignored) VALUES (?, ?, ?, ?)`);
    this.replaceOld = this.db.prepare(`REPLACE INTO incoming (identifier, line, "values", ignored) VALUES (?, ?, ?, ?)`);
    this.findScope = this.db.prepare(`SELECT s.identifier, s.ord, s."values" AS v FROM json_each(?) AS j CROSS JOIN scope AS s ON s.identifier = j.value`).raw();
    this.findScopeOrd = this.db.prepare("SELECT s.ord FROM scope AS s WHERE s.identifier = ?").pluck();
    this.findScopeAt = this.db.prepare("SELECT j.key FROM json_each(?) AS j CROSS JOIN scope AS s ON s.identifier = j.value").pluck();
    this.findScopeOrds = this.db.prepare("SELECT j.key, s.ord FROM json_each(?) AS j CROSS JOIN scope AS s ON s.identifier = j.value").raw();
    this.insertDeferred = this.db.prepare("INSERT INTO deferred (kind, line, identifier, message) VALUES (?, ?, ?, ?)");
    this.insertWaiting = this.db.prepare("INSERT INTO waiting (count, list) VALUES (?, ?)");
    this.commits = new WorkCommits(this.db);
    this.scopeInserts = new ScopeRows(this.db, this.scopeValues);
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

  /** Mapped records in file order (the position of an identifier's last row), in pages. */
  *incomingPages(pageSize = 1000): Generator<IncomingRow[]> {
    this.flush();
    const page = this.db.prepare(`SELECT seq, identifier, line, "values" AS v, ignored FROM incoming WHERE seq > ? ORDER BY seq LIMIT ?`);
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ seq: number; identifier: string; line: number; v: string; ignored: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({
        seq: r.seq,
        identifier: r.identifier,
        line: r.line,
        values: JSON.parse(r.v) as Record<string, string>,
        ignored: r.ignored === NONE ? NO_IGNORED : new Set(JSON.parse(r.ignored) as string[]),
      }));
    }
  }

  /** Rows of the scope read, as the service gives them; `endScope` once it is done, before any is looked up. */
  addScope(entries: readonly ScopeEntry[]): number {
    const kept = this.marks ? this.held.keep(entries, this.marks) : entries;
    this.scopeInserts.add(kept, this.scopeRows);
    this.scopeRows += entries.length;
    if (this.marks && kept === entries) for (const e of entries) this.marks.markScope(e.identifier);
    if (this.seen.length < this.scopeRows) {
      const grown = new Uint8Array(Math.max(this.scopeRows, this.seen.length * 2));
      grown.set(this.seen);
      this.seen = grown;
    }
    return entries.length;
  }

  /**
   * Scope records whose values come back exactly from a few bytes (the
   * identifier, short decimals), for a run that removes nothing: a record
   * that `marks` can answer for is held beside its entry rather than
   * inserted, and lookups ask there for what the table lacks (held-scope.ts).
   */
  holdScope(identifier: string): void {
    this.held.allow(identifier);
  }

  /**
   * From now on every scope identifier, those already in and those to come,
   * is also given to `marks`, until `dropScopeMarks`; removal then asks it
   * too whether the feed mentioned a record. A database already closed (the
   * pass ended) is left alone.
   */
  markScopeIn(marks: ScopeMarks): void {
    if (!this.db.open || this.marks === marks) return;
    if (this.scopeRows > 0) for (const page of this.scopeInserts.identifiers()) for (const identifier of page) marks.markScope(identifier);
    this.marks = marks;
  }

  /** Whether scope identifiers reach `marks`: all of them, once the scope read is done. */
  scopeMarkedIn(marks: ScopeMarks): boolean {
    return this.marks === marks;
  }

  /** Lets the marks go (their table is not needed past the plan); what they noted as mentioned is forgotten. */
  dropScopeMarks(): void {
    this.marks = null;
    this.held.release();
  }

  /** The scope read is done: what it inserted can be looked up (scope-rows.ts). */
  endScope(): void {
    this.scopeInserts.end();
  }

  scopeCount(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM scope").get() as { n: number }).n + this.held.count;
  }

  /**
   * The service's records among `identifiers`; with `mark`, those found are
   * noted as mentioned by the feed, so `unmentioned` leaves them out.
   */
  scopeLookup(identifiers: readonly string[], mark: boolean): Map<string, Record<string, string>> {
    const found = new Map<string, Record<string, string>>();
    if (identifiers.length === 0) return found;
    // One statement a page, its identifiers one JSON parameter: a statement per identifier, or one bound
    // parameter each, spent most of a diff run's plan on the calls rather than on SQLite's lookups.
    const rows = this.findScope.all(JSON.stringify(identifiers)) as Array<[string, number, string]>;
    for (const [identifier, ord, values] of rows) {
      found.set(identifier, this.scopeValues.decode(values));
      if (mark) this.seen[ord] = 1;
    }
    if (found.size < identifiers.length) this.held.lookup(identifiers, found);
    return found;
  }

  /**
   * Which of `identifiers` are in scope, without reading their values: 1 at
   * the position of each one that is. With `mark`, they are noted as
   * mentioned by the feed in the same statement. Without, the positions come
   * back as numbers: a diff run asks this of nearly every row, and numbers
   * cost far less than a string and a set entry for each identifier.
   */
  scopeHas(identifiers: readonly string[], mark: boolean): Uint8Array {
    if (identifiers.length === 0) return new Uint8Array(0);
    return this.scopeHasList(JSON.stringify(identifiers), identifiers.length, mark);
  }

  /** `scopeHas` of identifiers already given as a JSON list of `count` strings. */
  scopeHasList(list: string, count: number, mark: boolean): Uint8Array {
    const found = new Uint8Array(count);
    let hits = 0;
    if (!mark) {
      for (const at of this.findScopeAt.all(list) as number[]) {
        found[at] = 1;
        hits++;
      }
    } else {
      for (const [at, ord] of this.findScopeOrds.all(list) as Array<[number, number]>) {
        found[at] = 1;
        this.seen[ord] = 1;
        hits++;
      }
    }
    if (hits < count) this.held.has(list, found);
    return found;
  }

  /** A record the feed names without planning it (skipped, or its row failed): never a removal candidate. */
  markMentioned(identifier: string): void {
    const ord = this.findScopeOrd.get(identifier) as number | undefined;
    if (ord !== undefined) this.seen[ord] = 1;
  }

  /** Records in scope that the file does not mention: the removal candidates, in identifier order. */
  *unmentioned(pageSize = 1000): Generator<string[]> {
    this.held.refuseRemovals();
    const page = this.db.prepare("SELECT identifier, ord FROM scope WHERE identifier > ? ORDER BY identifier LIMIT ?").raw();
    let after = "";
    const ids: string[] = [];
    for (;;) {
      const rows = page.all(after, pageSize) as Array<[string, number]>;
      for (const [identifier, ord] of rows) if (this.seen[ord] !== 1 && this.marks?.mentioned(identifier) !== true) ids.push(identifier);
      while (ids.length >= pageSize) yield ids.splice(0, pageSize);
      const tail = rows[rows.length - 1];
      if (!tail) {
        if (ids.length) yield ids;
        return;
      }
      after = tail[0];
    }
  }

  /** Values the snapshot takes once applied: created, updated and (changed since the snapshot) unchanged records. */
  addCommits(entries: readonly SnapshotEntry[]): void {
    this.commits.add(entries);
  }

  /** The values the snapshot takes, as the JSON text they were added as: the store keeps that text, unparsed. */
  committable(): Generator<SnapshotText[]> {
    return this.commits.pages();
  }

  /** A row error or skip log of the plan, reported once the plan stands. */
  addDeferred(event: DeferredEvent): void {
    this.insertDeferred.run(event.kind, event.line, event.identifier, event.message);
  }

  *deferred(pageSize = 1000): Generator<DeferredEvent[]> {
    const page = this.db.prepare("SELECT seq, kind, line, identifier, message FROM deferred WHERE seq > ? ORDER BY seq LIMIT ?");
    let after = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<DeferredEvent & { seq: number }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]?.seq ?? after;
      yield rows.map((r) => ({ kind: r.kind, line: r.line, identifier: r.identifier, message: r.message }));
    }
  }

  /**
   * A JSON list of `count` identifiers that waits for the scope
   * (scope-wait.ts): one row a list of some two thousand, so that a million
   * identifiers cost some five hundred inserts and no memory.
   */
  addWaiting(list: string, count: number): void {
    this.insertWaiting.run(count, list);
  }

  /** The waiting lists in the order they came, each deleted once read. */
  *takeWaiting(pageSize = 16): Generator<{ list: string; count: number }> {
    const page = this.db.prepare("SELECT seq, count, list FROM waiting ORDER BY seq LIMIT ?");
    const done = this.db.prepare("DELETE FROM waiting WHERE seq <= ?");
    for (;;) {
      const rows = page.all(pageSize) as Array<{ seq: number; count: number; list: string }>;
      const tail = rows[rows.length - 1];
      if (!tail) return;
      done.run(tail.seq);
      for (const { list, count } of rows) yield { list, count };
    }
  }

  /** Forgets what a plan produced (commits, deferred events, lists waiting for the scope), for a plan made again. */
  resetPlan(): void {
    this.commits.reset();
    this.db.exec("DELETE FROM deferred; DELETE FROM waiting;");
  }

  /** The undo journal's operations held until the plan is done (a live diff run's, journal-table.ts). */
  journal(): JournalTable {
    return new JournalTable(this.db);
  }

  /** The apply's failed records and their messages, on disk (a refused feed fails every row). */
  failures(): FailedRecords {
    return new WorkFailures(this.db);
  }

  close(): void {
    this.db.close();
  }
}
