import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { ConveyorError } from "../errors.js";

/*
 * The daemon's own tables (accounts, definitions, alert bookkeeping) live in
 * the state database file, each prefixed `daemon_` and created with IF NOT
 * EXISTS: the state store migrates its own tables by `user_version` and never
 * touches these, so neither side can collide with the other's schema.
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
  CREATE TABLE IF NOT EXISTS daemon_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`;

export type DaemonDb = Database.Database;

/** The state database file the store uses: `<dataDir>/state.db`, or the file of a `sqlite:` URL. */
export function stateDbFile(settings: { dataDir: string; databaseUrl: string | undefined }): string {
  const url = settings.databaseUrl;
  if (url?.startsWith("sqlite:")) return path.resolve(url.slice("sqlite:".length));
  if (url) {
    throw new ConveyorError("settings_invalid", "CONVEYOR_DATABASE_URL: the daemon keeps accounts and definitions in SQLite only; unset it or use sqlite:<file>");
  }
  return path.join(settings.dataDir, "state.db");
}

export function openDaemonDb(file: string): DaemonDb {
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    throw new ConveyorError("state", `cannot open the daemon tables in ${file}: ${(err as Error).message}`, {
      cause: err,
      hint: "check that the data folder is writable and the file is not damaged",
    });
  }
}

export function metaGet(db: DaemonDb, key: string): string | null {
  const row = db.prepare("SELECT value FROM daemon_meta WHERE key = ?").get(key) as { value: string } | undefined;
  return row?.value ?? null;
}

export function metaSet(db: DaemonDb, key: string, value: string): void {
  db.prepare("INSERT INTO daemon_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}
