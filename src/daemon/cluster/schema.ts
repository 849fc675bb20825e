import type pg from "pg";
import { createTablesLocked } from "../../state/pg-connect.js";

/*
 * The cluster's own two tables, next to the state store's in its schema.
 * `fire_claims`: one row per automation and cron fire time; the daemon whose
 * INSERT wins runs (or skips) that fire time, every other daemon does nothing.
 * `run_locks`: one row per automation while a run of it executes anywhere,
 * with the daemon's lease (heartbeat); it is what keeps two daemons from
 * running one automation at once. `run_waiting`: the one run per automation
 * and mode that waits to start, so a second request gets its id; a daemon
 * that took it from the queue leases it until the run starts. Times are the database's clock, so daemons
 * with skewed clocks agree on whose lease ran out.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS fire_claims (
    automation text NOT NULL, fire_time timestamptz NOT NULL, daemon text NOT NULL,
    claimed timestamptz NOT NULL DEFAULT now(), run_id text, skipped text,
    PRIMARY KEY (automation, fire_time));
  CREATE INDEX IF NOT EXISTS fire_claims_by_claimed ON fire_claims (claimed);
  CREATE TABLE IF NOT EXISTS run_locks (
    automation text PRIMARY KEY, run_id text NOT NULL, daemon text NOT NULL,
    started timestamptz NOT NULL DEFAULT now(), heartbeat timestamptz NOT NULL DEFAULT now());
  CREATE TABLE IF NOT EXISTS run_waiting (
    automation text NOT NULL, mode text NOT NULL, run_id text NOT NULL UNIQUE, daemon text, heartbeat timestamptz,
    enqueued timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (automation, mode));`;

/** Creates the tables; daemons starting together take turns through an advisory lock. */
export async function ensureClusterSchema(pool: pg.Pool): Promise<void> {
  await createTablesLocked(pool, "conveyor.cluster", SCHEMA, "the cluster tables");
}

