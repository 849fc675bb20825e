import path from "node:path";
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { SQLITE_CACHE_PRAGMA } from "../memory.js";
import { privateDir, privateSqlite } from "../state/private-files.js";
import { ITEMS_SCHEMA, upgradeItems } from "./item-table.js";
import { WEBHOOK_SCHEMA } from "./webhook-store.js";

export type Db = Database.Database;

/**
 * The embedded service keeps everything in one SQLite file so a restart finds
 * items, orders, logs and bulk jobs where it left them. WAL lets the export
 * writer read while the bulk worker writes.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
${ITEMS_SCHEMA}
CREATE TABLE IF NOT EXISTS orders (
  oid INTEGER PRIMARY KEY AUTOINCREMENT,
  ord TEXT NOT NULL,
  channel TEXT NOT NULL DEFAULT '',
  archived INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_ord ON orders(ord);
CREATE TABLE IF NOT EXISTS logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  identifier TEXT NOT NULL, context TEXT NOT NULL, integration TEXT NOT NULL,
  instance INTEGER NOT NULL, request_id TEXT NOT NULL, timestamp TEXT NOT NULL,
  channel_id TEXT NOT NULL, action TEXT NOT NULL, operation TEXT NOT NULL,
  method TEXT NOT NULL, type TEXT NOT NULL, result TEXT NOT NULL, job_id TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS logs_identifier ON logs(identifier);
CREATE INDEX IF NOT EXISTS logs_request ON logs(request_id);
CREATE TABLE IF NOT EXISTS bulk_jobs (
  job_id INTEGER PRIMARY KEY AUTOINCREMENT,
  bulk_file TEXT NOT NULL UNIQUE,
  bulk_name TEXT NOT NULL, bulk_email TEXT NOT NULL, skip_all INTEGER NOT NULL,
  sha256 TEXT NOT NULL, created TEXT NOT NULL, status TEXT NOT NULL,
  rows INTEGER NOT NULL, processed INTEGER NOT NULL DEFAULT 0,
  succeeded INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
  upload TEXT NOT NULL, encoding TEXT NOT NULL, result TEXT, error TEXT,
  integration TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS bulk_jobs_created ON bulk_jobs(created);
CREATE TABLE IF NOT EXISTS exports (
  bulk_file TEXT PRIMARY KEY, type TEXT NOT NULL, search TEXT NOT NULL, fields TEXT NOT NULL,
  status TEXT NOT NULL, rows INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL, error TEXT
);
`;

export interface ServicePaths {
  root: string;
  db: string;
  files: string;
}

export function servicePaths(dataDir: string): ServicePaths {
  const root = path.join(dataDir, "embedded");
  return { root, db: path.join(root, "service.db"), files: path.join(root, "files") };
}

export function openDb(paths: ServicePaths): Db {
  privateDir(paths.root);
  privateDir(paths.files);
  const db = new Database(paths.db);
  privateSqlite(paths.db);
  db.pragma("journal_mode = WAL");
  privateSqlite(paths.db);
  db.pragma(SQLITE_CACHE_PRAGMA);
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.exec(SCHEMA);
  db.exec(WEBHOOK_SCHEMA);
  upgradeItems(db);
  // A data folder from before bulk jobs kept their integration.
  const columns = db.prepare("SELECT name FROM pragma_table_info('bulk_jobs')").pluck().all() as string[];
  if (!columns.includes("integration")) db.exec("ALTER TABLE bulk_jobs ADD COLUMN integration TEXT NOT NULL DEFAULT ''");
  // A job that was running when the process stopped is finished by nobody: say so.
  db.prepare("UPDATE bulk_jobs SET status='failed', error='the service stopped while the job ran; upload it again' WHERE status IN ('queued','running')").run();
  db.prepare("UPDATE exports SET status='failed', error='the service stopped while the export ran; start it again' WHERE status IN ('queued','running')").run();
  // The first commit into a new write-ahead log syncs its header, and on ext4 that sync waits for every dirty
  // page of the file system: a run's first export, right after the download wrote a 365 MB feed, stalled
  // the run 0.2 to 0.3 s on it. Committed now, while there is little to wait for.
  db.prepare("INSERT INTO meta (key, value) VALUES ('opened', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(sqlTime());
  return db;
}

/** A value generated once and kept in the meta table (the presign key). */
export function metaValue(db: Db, key: string, create: () => string = () => randomBytes(32).toString("hex")): string {
  const row = db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined;
  if (row) return row.value;
  const value = create();
  db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)").run(key, value);
  return value;
}

/** `Y-m-d H:i:s` in UTC, the seed's log timestamp format. */
export function sqlTime(date: Date = new Date()): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

let stampSecond = Number.NaN;
let stampText = "";

/** sqlTime of a clock reading in milliseconds, formatted once a second: a bulk job stamps each row's item and log record. */
export function sqlTimeAt(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== stampSecond) {
    stampText = sqlTime(new Date(ms));
    stampSecond = second;
  }
  return stampText;
}
