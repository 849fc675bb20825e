import path from "node:path";
import Database from "better-sqlite3";
import { ConveyorError } from "../errors.js";
import { makePrivateDir, privateSqlite } from "../state/private-files.js";
import { PostgresStore, type StateStore } from "../state/index.js";
import { PgSchedulerState } from "./scheduler-state-pg.js";
import type { SchedulerState } from "./types.js";
import { justBefore, type SkipRecord, type TimeColumn } from "./fire-times.js";

/*
 * A file of its own (`scheduler.db` next to `state.db`) rather than a table in
 * the state store's file: the store migrates its schema by `user_version`, and
 * a foreign table there could collide with a later migration.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS fire_state (key TEXT PRIMARY KEY, last_fire TEXT, last_full TEXT) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS skips (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, fire_time TEXT NOT NULL,
    reason TEXT NOT NULL, recorded TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS skips_by_key ON skips (key, seq);`;

/** Scheduler bookkeeping in SQLite, so a fire time missed while the daemon was down is caught up once. */
export class SqliteSchedulerState implements SchedulerState {
  private readonly db: Database.Database;

  constructor(
    file: string,
    private readonly now: () => number = Date.now,
  ) {
    makePrivateDir(path.dirname(file));
    try {
      this.db = new Database(file);
      privateSqlite(file);
      this.db.pragma("journal_mode = WAL");
      privateSqlite(file);
      this.db.pragma("busy_timeout = 5000");
      this.db.exec(SCHEMA);
    } catch (err) {
      throw new ConveyorError("state", `cannot open the scheduler database ${file}: ${(err as Error).message}`, {
        cause: err,
        hint: "check that the data folder is writable and the file is not damaged (it may be deleted: the next start runs no catch-up)",
      });
    }
  }

  static inDataDir(dataDir: string, now?: () => number): SqliteSchedulerState {
    return new SqliteSchedulerState(path.join(dataDir, "scheduler.db"), now);
  }

  async lastFireTime(key: string): Promise<string | null> {
    return this.column(key, "last_fire");
  }

  /** Never moves backwards: a late write of an older fire time must not cause a second catch-up. */
  async setLastFireTime(key: string, iso: string): Promise<void> {
    this.advance(key, "last_fire", iso);
  }

  async reopenFireTime(key: string, iso: string): Promise<void> {
    this.db.prepare("UPDATE fire_state SET last_fire = ? WHERE key = ? AND last_fire = ?").run(justBefore(iso), key, iso);
  }

  async lastFullRun(key: string): Promise<string | null> {
    return this.column(key, "last_full");
  }

  async setLastFullRun(key: string, iso: string): Promise<void> {
    this.advance(key, "last_full", iso);
  }

  async recordSkip(key: string, fireTime: string, reason: string): Promise<void> {
    this.db
      .prepare("INSERT INTO skips (key, fire_time, reason, recorded) VALUES (?, ?, ?, ?)")
      .run(key, fireTime, reason, new Date(this.now()).toISOString());
  }

  /** The latest skipped ticks of one automation, newest first. */
  async skips(key: string, limit = 100): Promise<SkipRecord[]> {
    return this.db
      .prepare("SELECT fire_time AS fireTime, reason, recorded FROM skips WHERE key = ? ORDER BY seq DESC LIMIT ?")
      .all(key, limit) as SkipRecord[];
  }

  /** Drop skip records older than the date (run_retention). */
  async pruneSkips(before: Date): Promise<number> {
    return this.db.prepare("DELETE FROM skips WHERE recorded < ?").run(before.toISOString()).changes;
  }

  async close(): Promise<void> {
    this.db.close();
  }

  /** Sets the time unless the stored one is later: both times only move forward. */
  private advance(key: string, name: TimeColumn, iso: string): void {
    this.db
      .prepare(
        `INSERT INTO fire_state (key, ${name}) VALUES (?, ?)
         ON CONFLICT (key) DO UPDATE SET ${name} = excluded.${name}
         WHERE fire_state.${name} IS NULL OR excluded.${name} > fire_state.${name}`,
      )
      .run(key, iso);
  }

  private column(key: string, name: TimeColumn): string | null {
    const row = this.db.prepare(`SELECT ${name} AS value FROM fire_state WHERE key = ?`).get(key) as { value: string | null } | undefined;
    return row?.value ?? null;
  }
}

/** Next to the state: `scheduler.db` in the data folder, or the PostgreSQL schema the store uses. */
export function openSchedulerState(settings: { dataDir: string }, store: StateStore): SchedulerState & { close(): Promise<void> } {
  if (store instanceof PostgresStore) return new PgSchedulerState(store.pool);
  return SqliteSchedulerState.inDataDir(settings.dataDir);
}
