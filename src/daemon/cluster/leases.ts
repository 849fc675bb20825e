import type pg from "pg";
import type { Logger } from "../../log.js";
import type { RunRecord, StateStore } from "../../state/index.js";

export interface LeaseOptions {
  pool: pg.Pool;
  store: Pick<StateStore, "markInterrupted">;
  daemon: string;
  /** A run lock whose heartbeat is older than this belongs to a dead daemon. */
  leaseMs: number;
  logger: Logger;
  onRecovered?: (runs: RunRecord[]) => void;
}

/**
 * Leases of the runs in the cluster. Every daemon renews the locks of its own
 * runs and, on the same beat, sweeps: locks whose lease ran out are deleted
 * (their automation may run again) and open run records whose heartbeat is as
 * old are marked failed ("interrupted"). Both statements are atomic, so any
 * number of daemons may sweep at once; each stale run is marked once.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;
  private beat: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaseOptions) {}

  /** Renew and sweep every quarter lease (at most every 10 s), starting now. */
  start(): void {
    const every = Math.max(250, Math.min(10_000, Math.floor(this.options.leaseMs / 4)));
    const tick = (): void => {
      this.beat = this.once().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, every);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.beat;
  }

  /** This daemon is gone for good: its locks are released now rather than when their lease runs out. */
  async releaseAll(): Promise<void> {
    await this.options.pool.query("DELETE FROM run_locks WHERE daemon = $1", [this.options.daemon]);
    await this.options.pool.query("DELETE FROM run_waiting WHERE daemon = $1", [this.options.daemon]);
  }

  async once(): Promise<void> {
    const { pool, daemon, leaseMs, logger, store } = this.options;
    try {
      await pool.query("UPDATE run_locks SET heartbeat = now() WHERE daemon = $1", [daemon]);
      await pool.query("UPDATE run_waiting SET heartbeat = now() WHERE daemon = $1", [daemon]);
      // A waiting run taken by a daemon that died never starts: free its place so new requests are not joined to it.
      await pool.query("DELETE FROM run_waiting WHERE daemon IS NOT NULL AND heartbeat < now() - $1 * interval '1 millisecond'", [leaseMs]);
      const expired = await pool.query<{ automation: string; run_id: string; daemon: string }>(
        "DELETE FROM run_locks WHERE heartbeat < now() - $1 * interval '1 millisecond' RETURNING automation, run_id, daemon",
        [leaseMs],
      );
      for (const lock of expired.rows) {
        logger.warn({ event: "lease_expired", automation: lock.automation, run_id: lock.run_id, daemon: lock.daemon }, "a daemon stopped renewing its run's lease; the automation is free again");
      }
      const runs = await store.markInterrupted(new Date(Date.now() - leaseMs));
      if (runs.length > 0) this.options.onRecovered?.(runs);
    } catch (err) {
      logger.error({ err }, "renewing or sweeping the run leases failed; trying again on the next beat");
    }
  }
}
