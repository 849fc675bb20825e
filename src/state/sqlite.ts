import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import Database from "better-sqlite3";
import { ConveyorError } from "../errors.js";
import { FolderDebugFiles } from "./debug-files.js";
import { interruptedError } from "./interrupted.js";
import { SqliteLocks } from "./sqlite-locks.js";
import { STATUS_MODES, deriveStatus } from "./status.js";
import { SqliteLogs } from "./sqlite-logs.js";
import { SqliteSnapshotPut } from "./sqlite-snapshot-put.js";
import { SNAPSHOT_KID, sqliteSnapshotCount, sqliteSourcePages } from "./sqlite-source-pages.js";
import { SQLITE_CACHE_PRAGMA } from "../memory.js";
import { makePrivateDir, privateSqlite } from "./private-files.js";
import type {
  AutomationLock,
  AutomationStatus,
  LedgerEntry,
  LogBatch,
  LogPage,
  LogQuery,
  LockRequest,
  RunListQuery,
  RunMode,
  RunProgressSnapshot,
  RunRecord,
  SnapshotPutEntry,
  StateStore,
  StoredDebugFile,
} from "./types.js";

const MIGRATIONS: string[] = [
  `CREATE TABLE runs (
     id TEXT PRIMARY KEY, automation TEXT NOT NULL, account TEXT NOT NULL, mode TEXT NOT NULL,
     started TEXT NOT NULL, finished TEXT, outcome TEXT, heartbeat TEXT, body TEXT NOT NULL);
   CREATE INDEX runs_by_automation ON runs (automation, started);
   CREATE TABLE status_reset (automation TEXT NOT NULL, mode TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (automation, mode));
   CREATE TABLE snapshots (key TEXT NOT NULL, identifier TEXT NOT NULL, "values" TEXT NOT NULL, updated TEXT NOT NULL,
     PRIMARY KEY (key, identifier)) WITHOUT ROWID;
   CREATE TABLE ledger (key TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, modified TEXT NOT NULL, added TEXT NOT NULL,
     PRIMARY KEY (key, path, size, modified)) WITHOUT ROWID;
   CREATE TABLE logs (seq INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, id TEXT NOT NULL, identifier TEXT NOT NULL,
     job_id TEXT NOT NULL, request_id TEXT NOT NULL, timestamp TEXT NOT NULL, body TEXT NOT NULL);
   CREATE INDEX logs_by_identifier ON logs (account, identifier);
   CREATE INDEX logs_by_job ON logs (account, job_id);
   CREATE TABLE metadata (automation TEXT PRIMARY KEY, body TEXT NOT NULL);`,
  `CREATE TABLE run_locks (automation TEXT PRIMARY KEY, run_id TEXT NOT NULL, holder TEXT NOT NULL, started TEXT NOT NULL, heartbeat TEXT NOT NULL);`,
  `CREATE TABLE undo_journal (run_id TEXT NOT NULL, chunk INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (run_id, chunk)) WITHOUT ROWID;`,
  // The events each event run took, so the run of an event is found without reading every record.
  `CREATE TABLE run_events (event_id TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (event_id, run_id)) WITHOUT ROWID;
   CREATE INDEX run_events_by_run ON run_events (run_id);`,
  // A column of its own: saved once a second while a run runs, without rewriting the record's body.
  `ALTER TABLE runs ADD COLUMN progress TEXT;`,
  // The source fingerprint of each snapshot entry (SnapshotEntry.source): null for entries put before it existed.
  `ALTER TABLE snapshots ADD COLUMN source TEXT;`,
  // Log records as pages of a run's records (sqlite-logs.ts), and the keys searches find them by. Table logs keeps older records.
  `CREATE TABLE log_pages (seq INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, job_id TEXT NOT NULL, count INTEGER NOT NULL,
     id_prefix TEXT, id_from INTEGER NOT NULL, time_min TEXT NOT NULL, time_max TEXT NOT NULL, search_min TEXT NOT NULL,
     search_max TEXT NOT NULL, body TEXT NOT NULL);
   CREATE INDEX log_pages_by_account ON log_pages (account, seq);
   CREATE INDEX log_pages_by_job ON log_pages (account, job_id, seq);
   CREATE INDEX log_pages_by_id ON log_pages (account, id_prefix, id_from) WHERE id_prefix IS NOT NULL;
   CREATE INDEX log_pages_by_time ON log_pages (time_min);
   CREATE TABLE log_keys (account TEXT NOT NULL, key TEXT NOT NULL, page INTEGER NOT NULL, PRIMARY KEY (account, key, page)) WITHOUT ROWID;`,
  // A page whose identifiers come in order keeps them as a range, not as a key each in log_keys (log-page.ts).
  `ALTER TABLE log_pages ADD COLUMN key_min TEXT;
   ALTER TABLE log_pages ADD COLUMN key_max TEXT;
   CREATE INDEX log_pages_by_range ON log_pages (account, key_min, key_max) WHERE key_min IS NOT NULL;`,
  // Snapshot entries under a number for their key, and the time they were put in milliseconds (sqlite-source-pages.ts).
  `CREATE TABLE snapshot_keys (kid INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE);
   CREATE TABLE snapshot_entries (kid INTEGER NOT NULL, identifier TEXT NOT NULL, "values" TEXT NOT NULL, updated INTEGER NOT NULL, source TEXT,
     PRIMARY KEY (kid, identifier)) WITHOUT ROWID;
   INSERT INTO snapshot_keys (key) SELECT DISTINCT key FROM snapshots ORDER BY key;
   INSERT INTO snapshot_entries (kid, identifier, "values", updated, source)
     SELECT k.kid, s.identifier, s."values", coalesce(CAST(round((julianday(s.updated) - 2440587.5) * 86400000.0) AS INTEGER), 0), s.source
     FROM snapshots AS s JOIN snapshot_keys AS k ON k.key = s.key ORDER BY k.kid, s.identifier;
   DROP TABLE snapshots;`,
];

interface RunRow {
  body: string;
  progress?: string | null;
  heartbeat?: string | null;
}

/** The record with its progress while it runs (the column holds the newer heartbeat too). */
function runFromRow(row: RunRow): RunRecord {
  const run = JSON.parse(row.body) as RunRecord;
  if (run.outcome !== null || !row.progress) return run;
  return { ...run, heartbeat: row.heartbeat ?? run.heartbeat, progress: JSON.parse(row.progress) as RunProgressSnapshot };
}

/** The embedded default: one SQLite file in the data folder, WAL, migrations by user_version. */
export class SqliteStore implements StateStore {
  readonly localFile: string;
  private readonly db: Database.Database;
  private readonly debugFiles: FolderDebugFiles;
  private snapshotLookup: Database.Statement | undefined;
  private sourceLookup: Database.Statement | undefined;
  private readonly snapshotWriter: SqliteSnapshotPut;
  private readonly locks: SqliteLocks;
  private readonly logs: SqliteLogs;

  /** `dataDir` holds the run folders (debug files); by default the folder of the database file. */
  constructor(file: string, options: { dataDir?: string } = {}) {
    this.localFile = file;
    this.debugFiles = new FolderDebugFiles(options.dataDir ?? path.dirname(file));
    makePrivateDir(path.dirname(file));
    try {
      this.db = new Database(file);
    } catch (err) {
      throw new ConveyorError("state", `cannot open the state database ${file}: ${(err as Error).message}`, { cause: err });
    }
    // Before the log exists: SQLite gives the -wal file the database's mode. An old 0644 file is narrowed here too.
    privateSqlite(file);
    this.db.pragma("journal_mode = WAL");
    privateSqlite(file);
    // Deleted cells are zeroed where that costs no extra write; FAST, not ON: runs, logs and snapshots churn
    // here, and ON would also write every freed page. The definitions' connection (daemon-db-sqlite.ts) uses ON.
    this.db.pragma("secure_delete = FAST");
    this.db.pragma(SQLITE_CACHE_PRAGMA);
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.migrate();
    this.locks = new SqliteLocks(this.db);
    this.logs = new SqliteLogs(this.db);
    this.snapshotWriter = new SqliteSnapshotPut(this.db);
  }

  private migrate(): void {
    const version = Number(this.db.pragma("user_version", { simple: true }));
    for (let i = version; i < MIGRATIONS.length; i++) {
      const sql = MIGRATIONS[i] ?? "";
      this.db.transaction(() => {
        this.db.exec(sql);
        this.db.pragma(`user_version = ${i + 1}`);
      })();
    }
  }

  async createRun(run: RunRecord): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare("INSERT INTO runs (id, automation, account, mode, started, finished, outcome, heartbeat, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .run(run.id, run.automation, run.account, run.mode, run.started, run.finished, run.outcome, run.heartbeat, JSON.stringify(run));
      const event = this.db.prepare("INSERT OR IGNORE INTO run_events (event_id, run_id) VALUES (?, ?)");
      for (const id of run.events ?? []) event.run(id, run.id);
    })();
  }

  async saveProgress(id: string, progress: RunProgressSnapshot): Promise<void> {
    this.db.prepare("UPDATE runs SET progress = ?, heartbeat = ? WHERE id = ? AND outcome IS NULL").run(JSON.stringify(progress), progress.at, id);
  }

  async updateRun(id: string, patch: Partial<Omit<RunRecord, "id">>): Promise<void> {
    this.db.transaction(() => {
      const row = this.db.prepare("SELECT body FROM runs WHERE id = ?").get(id) as RunRow | undefined;
      if (!row) throw new ConveyorError("state", `run ${id} does not exist`);
      const { progress: _progress, ...next }: RunRecord = { ...(JSON.parse(row.body) as RunRecord), ...patch, id };
      this.db
        .prepare("UPDATE runs SET finished = ?, outcome = ?, heartbeat = ?, body = ? WHERE id = ?")
        .run(next.finished, next.outcome, next.heartbeat, JSON.stringify(next), id);
    })();
  }

  private readRun(id: string): RunRecord | null {
    const row = this.db.prepare("SELECT body, progress, heartbeat FROM runs WHERE id = ?").get(id) as RunRow | undefined;
    return row ? runFromRow(row) : null;
  }

  async getRun(id: string): Promise<RunRecord | null> {
    return this.readRun(id);
  }

  async listRuns(query: RunListQuery = {}): Promise<RunRecord[]> {
    const filters: Array<[string, string | undefined]> = [
      ["automation = ?", query.automation],
      ["account = ?", query.account],
      ["mode = ?", query.mode],
      ["id IN (SELECT run_id FROM run_events WHERE event_id = ?)", query.event],
    ];
    const used = filters.filter((f): f is [string, string] => f[1] !== undefined);
    const where = used.map(([sql]) => sql);
    const args = used.map(([, value]) => value);
    const sql = `SELECT body, progress, heartbeat FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY started DESC, id DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, query.limit ?? 100) as RunRow[];
    return rows.map(runFromRow);
  }

  async markInterrupted(staleBefore: Date, dead: readonly string[] = []): Promise<RunRecord[]> {
    const stale = this.db
      .prepare("SELECT id FROM runs WHERE outcome IS NULL AND (heartbeat IS NULL OR heartbeat < ? OR id IN (SELECT value FROM json_each(?)))")
      .all(staleBefore.toISOString(), JSON.stringify(dead)) as { id: string }[];
    const finished = new Date().toISOString();
    const out: RunRecord[] = [];
    for (const { id } of stale) {
      const run = this.readRun(id);
      if (!run) continue;
      await this.updateRun(id, {
        outcome: "failed",
        finished,
        error: interruptedError(run),
      });
      const marked = this.readRun(id);
      if (marked) out.push(marked);
    }
    return out;
  }

  async pruneRuns(before: Date): Promise<number> {
    // Log records go with the runs that wrote them: both are kept for run_retention.
    this.logs.prune(before.toISOString().replace("T", " ").slice(0, 19));
    // The undo journals and the event links go with their runs (PostgreSQL: by their foreign keys).
    this.db.prepare("DELETE FROM undo_journal WHERE run_id IN (SELECT id FROM runs WHERE outcome IS NOT NULL AND started < ?)").run(before.toISOString());
    this.db.prepare("DELETE FROM run_events WHERE run_id IN (SELECT id FROM runs WHERE outcome IS NOT NULL AND started < ?)").run(before.toISOString());
    return this.db.prepare("DELETE FROM runs WHERE outcome IS NOT NULL AND started < ?").run(before.toISOString()).changes;
  }

  async status(automation: string): Promise<AutomationStatus> {
    const resets: Partial<Record<RunMode, string>> = Object.fromEntries(
      (this.db.prepare("SELECT mode, at FROM status_reset WHERE automation = ?").all(automation) as { mode: RunMode; at: string }[]).map((r) => [r.mode, r.at]),
    );
    // The newest run of each mode, however many of the other mode came after it.
    const newest = this.db.prepare("SELECT body FROM runs WHERE automation = ? AND mode = ? AND started > ? ORDER BY started DESC, id DESC LIMIT 1").pluck();
    const runs = STATUS_MODES.flatMap((mode) => {
      const body = newest.get(automation, mode, resets[mode] ?? "") as string | undefined;
      return body === undefined ? [] : [JSON.parse(body) as RunRecord];
    });
    return deriveStatus(runs, resets);
  }

  async resetStatus(automation: string, mode: RunMode): Promise<void> {
    this.db
      .prepare("INSERT INTO status_reset (automation, mode, at) VALUES (?, ?, ?) ON CONFLICT (automation, mode) DO UPDATE SET at = excluded.at")
      .run(automation, mode, new Date().toISOString());
  }

  async snapshotGet(key: string, identifiers: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    for (const [identifier, text] of await this.snapshotText(key, identifiers)) out.set(identifier, JSON.parse(text) as Record<string, string>);
    return out;
  }

  async snapshotText(key: string, identifiers: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (identifiers.length === 0) return out;
    // The identifiers go as one JSON parameter: binding one parameter each cost a diff run more than the lookups.
    // CROSS JOIN keeps SQLite from scanning the key's whole snapshot once per page.
    this.snapshotLookup ??= this.db.prepare(`SELECT s.identifier, s."values" AS v FROM json_each(?) AS j CROSS JOIN snapshot_entries AS s ON s.kid = ${SNAPSHOT_KID} AND s.identifier = j.value`);
    const rows = this.snapshotLookup.all(JSON.stringify(identifiers), key) as { identifier: string; v: string }[];
    for (const row of rows) out.set(row.identifier, row.v);
    return out;
  }

  async snapshotSources(key: string, identifiers: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (identifiers.length === 0) return out;
    // As snapshotText: one JSON parameter, and CROSS JOIN so the identifiers drive the lookup.
    this.sourceLookup ??= this.db.prepare(`SELECT s.identifier, s.source FROM json_each(?) AS j CROSS JOIN snapshot_entries AS s ON s.kid = ${SNAPSHOT_KID} AND s.identifier = j.value WHERE s.source IS NOT NULL`);
    const rows = this.sourceLookup.raw().all(JSON.stringify(identifiers), key) as Array<[string, string]>;
    for (const [identifier, source] of rows) out.set(identifier, source);
    return out;
  }

  async *snapshotSourcePages(key: string, pageSize = 1000): AsyncGenerator<Array<[string, string | null]>> {
    yield* sqliteSourcePages(this.db, key, pageSize);
  }

  /**
   * One transaction; a later entry of an identifier wins (sqlite-snapshot-put.ts). The writes a commit loops over
   * (this, snapshotDelete, addLogs) each end by giving way to timers and sockets: SQLite writes without waiting, and
   * such a loop held the event loop for the whole commit, the daemon's API, heartbeats and the embedded service with it.
   */
  async snapshotPut(key: string, entries: readonly SnapshotPutEntry[]): Promise<void> {
    this.snapshotWriter.put(key, entries);
    await nextTurn();
  }

  async snapshotDelete(key: string, identifiers: readonly string[]): Promise<void> {
    const stmt = this.db.prepare(`DELETE FROM snapshot_entries WHERE kid = ${SNAPSHOT_KID} AND identifier = ?`);
    this.db.transaction(() => {
      for (const id of identifiers) stmt.run(key, id);
    })();
    await nextTurn();
  }

  async snapshotCount(key: string): Promise<number> {
    return sqliteSnapshotCount(this.db, key);
  }

  async snapshotPruneBefore(key: string, since: string): Promise<number> {
    const before = Date.parse(since);
    if (Number.isNaN(before)) throw new ConveyorError("state", `snapshotPruneBefore takes an ISO 8601 time, not ${JSON.stringify(since)}`);
    return this.db.prepare(`DELETE FROM snapshot_entries WHERE kid = ${SNAPSHOT_KID} AND updated < ?`).run(key, before).changes;
  }

  async ledgerHas(key: string, entry: LedgerEntry): Promise<boolean> {
    const row = this.db
      .prepare("SELECT 1 FROM ledger WHERE key = ? AND path = ? AND size = ? AND modified = ?")
      .get(key, entry.path, entry.size, entry.modified ?? "");
    return row !== undefined;
  }

  async ledgerAdd(key: string, entries: readonly LedgerEntry[]): Promise<void> {
    const stmt = this.db.prepare("INSERT OR IGNORE INTO ledger (key, path, size, modified, added) VALUES (?, ?, ?, ?, ?)");
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const e of entries) stmt.run(key, e.path, e.size, e.modified ?? "", now);
    })();
  }

  async addLogs(account: string, logs: LogBatch): Promise<void> {
    this.logs.add(account, logs);
    await nextTurn();
  }

  async searchLogs(query: LogQuery): Promise<LogPage> {
    return this.logs.search(query);
  }

  async putDebugFile(runId: string, name: string, file: string): Promise<void> {
    await this.debugFiles.put(runId, name, file);
  }

  async getDebugFile(runId: string, name: string): Promise<StoredDebugFile | null> {
    return this.debugFiles.get(runId, name);
  }

  async listDebugFiles(runId: string): Promise<string[]> {
    return this.debugFiles.list(runId);
  }

  async lockAutomation(request: LockRequest, leaseMs: number): Promise<AutomationLock> {
    return this.locks.lock(request, leaseMs);
  }

  async renewLock(automation: string, runId: string): Promise<boolean> {
    return this.locks.renew(automation, runId);
  }

  async releaseLock(automation: string, runId: string): Promise<void> {
    this.locks.release(automation, runId);
  }

  async putUndoChunk(runId: string, chunk: number, body: Buffer): Promise<void> {
    this.db.prepare("INSERT OR REPLACE INTO undo_journal (run_id, chunk, body) VALUES (?, ?, ?)").run(runId, chunk, body);
  }

  async getUndoChunks(runId: string): Promise<Buffer[]> {
    return this.db.prepare("SELECT body FROM undo_journal WHERE run_id = ? ORDER BY chunk").pluck().all(runId) as Buffer[];
  }

  async getMetadata(automation: string): Promise<Record<string, unknown>> {
    const row = this.db.prepare("SELECT body FROM metadata WHERE automation = ?").get(automation) as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as Record<string, unknown>) : {};
  }

  async setMetadata(automation: string, metadata: Record<string, unknown>): Promise<void> {
    this.db
      .prepare("INSERT INTO metadata (automation, body) VALUES (?, ?) ON CONFLICT (automation) DO UPDATE SET body = excluded.body")
      .run(automation, JSON.stringify(metadata));
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
