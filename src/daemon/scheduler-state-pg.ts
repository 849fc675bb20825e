import type pg from "pg";
import { justBefore, type SkipRecord, type TimeColumn } from "./fire-times.js";
import type { SchedulerState } from "./types.js";

/**
 * Scheduler bookkeeping in the PostgreSQL schema of the state store, shared by
 * every daemon on it: a fire time one daemon dealt with is not caught up again
 * by another after a restart. On the store's pool, which the store closes.
 */
export class PgSchedulerState implements SchedulerState {
  constructor(
    private readonly pool: pg.Pool,
    private readonly now: () => number = Date.now,
  ) {}

  async lastFireTime(key: string): Promise<string | null> {
    return this.column(key, "last_fire");
  }

  /** Never moves backwards, whichever daemon writes last. */
  async setLastFireTime(key: string, iso: string): Promise<void> {
    await this.advance(key, "last_fire", iso);
  }

  async reopenFireTime(key: string, iso: string): Promise<void> {
    await this.pool.query("UPDATE scheduler_fire_state SET last_fire = $1 WHERE key = $2 AND last_fire = $3", [justBefore(iso), key, iso]);
  }

  async lastFullRun(key: string): Promise<string | null> {
    return this.column(key, "last_full");
  }

  async setLastFullRun(key: string, iso: string): Promise<void> {
    await this.advance(key, "last_full", iso);
  }

  async recordSkip(key: string, fireTime: string, reason: string): Promise<void> {
    await this.pool.query("INSERT INTO scheduler_skips (key, fire_time, reason, recorded) VALUES ($1, $2, $3, $4)", [key, fireTime, reason, new Date(this.now()).toISOString()]);
  }

  /** The latest skipped ticks of one automation, newest first. */
  async skips(key: string, limit = 100): Promise<SkipRecord[]> {
    const { rows } = await this.pool.query<{ fire_time: string; reason: string; recorded: Date }>(
      "SELECT fire_time, reason, recorded FROM scheduler_skips WHERE key = $1 ORDER BY seq DESC LIMIT $2",
      [key, limit],
    );
    return rows.map((r) => ({ fireTime: r.fire_time, reason: r.reason, recorded: r.recorded.toISOString() }));
  }

  /** Also a cluster's fire claims, one row per automation and fire time, needed only around their fire time. */
  async pruneSkips(before: Date): Promise<number> {
    const pruned = (await this.pool.query("DELETE FROM scheduler_skips WHERE recorded < $1", [before.toISOString()])).rowCount ?? 0;
    const { rows } = await this.pool.query<{ present: boolean }>("SELECT to_regclass('fire_claims') IS NOT NULL AS present");
    if (rows[0]?.present) await this.pool.query("DELETE FROM fire_claims WHERE claimed < $1", [before.toISOString()]);
    return pruned;
  }

  async close(): Promise<void> {
    // The pool belongs to the state store.
  }

  /** Sets the time unless the stored one is later: both times only move forward. */
  private async advance(key: string, name: TimeColumn, iso: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO scheduler_fire_state (key, ${name}) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET ${name} = excluded.${name}
       WHERE scheduler_fire_state.${name} IS NULL OR excluded.${name} > scheduler_fire_state.${name}`,
      [key, iso],
    );
  }

  private async column(key: string, name: TimeColumn): Promise<string | null> {
    const { rows } = await this.pool.query<{ value: string | null }>(`SELECT ${name} AS value FROM scheduler_fire_state WHERE key = $1`, [key]);
    return rows[0]?.value ?? null;
  }
}
