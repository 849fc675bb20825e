/**
 * A SQLite file of scratch data, thrown away with the run folder it lives
 * in (a run's work database, an export commit's sorted entries): durability
 * is worthless there, speed is not.
 *
 * @module
 */

import Database from "better-sqlite3";
import { SQLITE_CACHE_PRAGMA } from "./memory.js";

export function openScratchSqlite(file: string): Database.Database {
  const db = new Database(file);
  // better-sqlite3 opens a connection in SQLite's defensive mode, which keeps the rollback journal without a word
  // when asked to turn it off.
  db.unsafeMode(true);
  db.pragma("journal_mode = OFF");
  db.unsafeMode(false);
  db.pragma(SQLITE_CACHE_PRAGMA);
  db.pragma("synchronous = OFF");
  return db;
}
