import path from "node:path";
import Database from "better-sqlite3";
import { ConveyorError } from "../errors.js";
import { makePrivateDir, privateSqlite } from "../state/private-files.js";
import type { AccountRow, AccountRows, DaemonDb, SessionRows } from "./daemon-db-types.js";
import { SqliteSessionRows } from "./session-rows.js";
import { QUEUE_SCHEMA, SqliteQueueJournal } from "./daemon-db-queue.js";
import { SqliteDefinitionStore } from "./definitions-store.js";
import { EVENTS_SCHEMA, SqliteEventStore } from "../events/store-sqlite.js";

/*
 * In the state store's SQLite file, each table prefixed `daemon_` and created
 * with IF NOT EXISTS: the store migrates its own tables by `user_version` and
 * never touches these, so neither side can collide with the other's schema.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS daemon_accounts (
    api_user TEXT PRIMARY KEY, token TEXT NOT NULL, created TEXT NOT NULL, origin TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS daemon_automations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, kind TEXT NOT NULL, slug TEXT NOT NULL,
    shared_id TEXT, body TEXT NOT NULL, created TEXT NOT NULL, last_modified TEXT NOT NULL,
    source TEXT, source_hash TEXT);
  CREATE UNIQUE INDEX IF NOT EXISTS daemon_automations_slug ON daemon_automations (account, kind, slug);
  CREATE TABLE IF NOT EXISTS daemon_alerts (automation TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,
    sent TEXT NOT NULL, PRIMARY KEY (automation, kind)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS daemon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS daemon_console_sessions (id_hash TEXT PRIMARY KEY, account TEXT NOT NULL, token_mac TEXT NOT NULL,
    created TEXT NOT NULL, expires TEXT NOT NULL, last_seen TEXT NOT NULL) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS daemon_console_sessions_by_expiry ON daemon_console_sessions (expires);`;

class SqliteAccountRows implements AccountRows {
  constructor(private readonly db: Database.Database) {}

  async upsert(row: AccountRow): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO daemon_accounts (api_user, token, created, origin) VALUES (?, ?, ?, ?)
         ON CONFLICT (api_user) DO UPDATE SET token = excluded.token, origin = excluded.origin`,
      )
      .run(row.api_user, row.token, row.created, row.origin);
  }

  async delete(apiUser: string): Promise<boolean> {
    return this.db.prepare("DELETE FROM daemon_accounts WHERE api_user = ?").run(apiUser).changes > 0;
  }

  async list(): Promise<Array<Omit<AccountRow, "token">>> {
    return this.db.prepare("SELECT api_user, created, origin FROM daemon_accounts ORDER BY api_user").all() as Array<Omit<AccountRow, "token">>;
  }

  async token(apiUser: string): Promise<string | null> {
    const row = this.db.prepare("SELECT token FROM daemon_accounts WHERE api_user = ?").get(apiUser) as { token: string } | undefined;
    return row?.token ?? null;
  }
}

/** The daemon's tables in the SQLite state file (one daemon per data folder). */
export class SqliteDaemonDb implements DaemonDb {
  readonly accounts: AccountRows;
  readonly sessions: SessionRows;
  readonly definitions: SqliteDefinitionStore;
  readonly queue: SqliteQueueJournal;
  readonly events: SqliteEventStore;

  private constructor(
    private readonly db: Database.Database,
    file: string,
  ) {
    this.accounts = new SqliteAccountRows(db);
    this.sessions = new SqliteSessionRows(db);
    this.definitions = new SqliteDefinitionStore(db);
    this.queue = new SqliteQueueJournal(db, file);
    this.events = new SqliteEventStore(db);
  }

  static open(file: string): SqliteDaemonDb {
    makePrivateDir(path.dirname(file));
    try {
      const db = new Database(file);
      privateSqlite(file);
      db.pragma("journal_mode = WAL");
      privateSqlite(file);
      // Definitions rewritten with their secrets sealed must not leave the clear text in freed space.
      db.pragma("secure_delete = ON");
      db.pragma("busy_timeout = 5000");
      db.exec(SCHEMA + QUEUE_SCHEMA + EVENTS_SCHEMA);
      return new SqliteDaemonDb(db, file);
    } catch (err) {
      throw new ConveyorError("state", `cannot open the daemon tables in ${file}: ${(err as Error).message}`, {
        cause: err,
        hint: "check that the data folder is writable and the file is not damaged",
      });
    }
  }

  async alertRef(automation: string, kind: string): Promise<string | null> {
    const row = this.db.prepare("SELECT ref FROM daemon_alerts WHERE automation = ? AND kind = ?").get(automation, kind) as { ref: string } | undefined;
    return row?.ref ?? null;
  }

  async setAlert(automation: string, kind: string, ref: string, sent: string): Promise<void> {
    this.db
      .prepare("INSERT INTO daemon_alerts (automation, kind, ref, sent) VALUES (?, ?, ?, ?) ON CONFLICT (automation, kind) DO UPDATE SET ref = excluded.ref, sent = excluded.sent")
      .run(automation, kind, ref, sent);
  }

  async metaGet(key: string): Promise<string | null> {
    const row = this.db.prepare("SELECT value FROM daemon_meta WHERE key = ?").get(key) as { value: string } | undefined;
    return row?.value ?? null;
  }

  async metaSet(key: string, value: string): Promise<void> {
    this.db.prepare("INSERT INTO daemon_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  async metaInit(key: string, value: string): Promise<string> {
    this.db.prepare("INSERT OR IGNORE INTO daemon_meta (key, value) VALUES (?, ?)").run(key, value);
    return (await this.metaGet(key)) ?? value;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
