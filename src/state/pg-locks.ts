import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { holderMayBeAlive } from "./automation-lock.js";
import { inTransaction } from "./pg-connect.js";
import type { AutomationLock, LockRequest } from "./types.js";

/*
 * The automations' no-overlap locks in PostgreSQL are the cluster's own
 * `run_locks` rows (daemon/cluster/schema.ts): the lock a daemon's dispatcher
 * takes before a run is the one a CLI run takes, so neither a daemon nor a
 * CLI on the database starts a run of an automation another one is running.
 * The `daemon` column names the holder; times are the database's clock, so
 * machines with skewed clocks agree on whose lease ran out.
 */

interface LockRow {
  automation: string;
  run_id: string;
  holder: string;
  started: Date;
  heartbeat: Date;
}

function toLock(row: LockRow): AutomationLock {
  return { automation: row.automation, run_id: row.run_id, holder: row.holder, started: row.started.toISOString(), heartbeat: row.heartbeat.toISOString() };
}

/**
 * A stale row goes first (lease out, or its holder's process on this machine
 * gone), then the insert: a concurrent attempt blocks on the
 * row until this one commits and then sees it taken. A run asking again (the
 * dispatcher took the lock for the run the executor now starts) keeps it and
 * its holder, whose lease keeper renews it.
 */
export async function pgLock(pool: pg.Pool, request: LockRequest, leaseMs: number): Promise<AutomationLock> {
  return inTransaction(pool, async (client) => {
    await client.query("DELETE FROM run_locks WHERE automation = $1 AND run_id <> $2 AND heartbeat < now() - $3 * interval '1 millisecond'", [request.automation, request.runId, leaseMs]);
    // As in SQLite: a holder on this machine whose process is gone (kill -9) holds nothing, without waiting out its lease.
    const held = await client.query<{ run_id: string; holder: string }>("SELECT run_id, daemon AS holder FROM run_locks WHERE automation = $1 AND run_id <> $2 FOR UPDATE", [request.automation, request.runId]);
    const gone = held.rows.find((row) => !holderMayBeAlive(row.holder));
    if (gone) await client.query("DELETE FROM run_locks WHERE automation = $1 AND run_id = $2", [request.automation, gone.run_id]);
    await client.query(
      `INSERT INTO run_locks (automation, run_id, daemon) VALUES ($1, $2, $3)
       ON CONFLICT (automation) DO UPDATE SET heartbeat = now() WHERE run_locks.run_id = excluded.run_id`,
      [request.automation, request.runId, request.holder],
    );
    const { rows } = await client.query<LockRow>("SELECT automation, run_id, daemon AS holder, started, heartbeat FROM run_locks WHERE automation = $1", [request.automation]);
    const row = rows[0];
    if (!row) throw new ConveyorError("state", `the run lock of automation ${request.automation} vanished while it was taken`, { hint: "run it again" });
    return toLock(row);
  });
}

export async function pgRenewLock(pool: pg.Pool, automation: string, runId: string): Promise<boolean> {
  const result = await pool.query("UPDATE run_locks SET heartbeat = now() WHERE automation = $1 AND run_id = $2", [automation, runId]);
  return result.rowCount === 1;
}

export async function pgReleaseLock(pool: pg.Pool, automation: string, runId: string): Promise<void> {
  await pool.query("DELETE FROM run_locks WHERE automation = $1 AND run_id = $2", [automation, runId]);
}
