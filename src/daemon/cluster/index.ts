import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type pg from "pg";
import { PgBoss, type SendOptions } from "pg-boss";
import { ConveyorError } from "../../errors.js";
import type { Logger } from "../../log.js";
import { maskSecrets } from "../../secrets.js";
import { openSharedPool } from "../../service/pg-pool.js";
import { quoteIdent } from "../../state/pg-migrations.js";
import type { RunRecord, StateStore } from "../../state/index.js";
import type { RunQueue } from "../queue.js";
import type { SchedulerState } from "../types.js";
import { ClusterDispatcher } from "./dispatcher.js";
import { ClusterIntake, RUN_QUEUE } from "./intake.js";
import { LeaseKeeper } from "./leases.js";
import { moveOldRuns, setAsideOldQueue } from "./queue-upgrade.js";
import { ensureClusterSchema } from "./schema.js";

export { ClusterIntake, type TickResult } from "./intake.js";

/** The recorder beats every 10 s; a lease shorter than two beats would take live runs for dead. */
export const MIN_LEASE_MS = 20_000;
const MAX_EXPIRE_SECONDS = 24 * 3600 - 1;

export interface ClusterOptions {
  databaseUrl: string;
  queue: RunQueue;
  store: Pick<StateStore, "markInterrupted">;
  schedulerState: Pick<SchedulerState, "recordSkip">;
  concurrency: number;
  maxRunTimeMs: number;
  /** A run whose daemon stopped renewing it for this long is interrupted (default 60 s). */
  leaseMs?: number;
  /** How often an idle slot asks the queue for work when nothing woke it (default 2 s). */
  pollingIntervalSeconds?: number;
  logger: Logger;
  onRecovered?: (runs: RunRecord[]) => void;
}

export interface Cluster {
  /** This daemon's name in the cluster tables: host, process and a random part. */
  daemon: string;
  intake: ClusterIntake;
  /** Runs waiting in the shared queue, and taken by a daemon, across the cluster. */
  depth(): Promise<{ waiting: number; running: number }>;
  /** Runs each daemon (or CLI run) holds a run lock for now, by holder name. */
  running(): Promise<Array<{ daemon: string; running: number }>>;
  /** Shutdown, first step: take no more runs from the queue. */
  stopFetching(): Promise<void>;
  /** Shutdown, last step: release this daemon's locks, stop pg-boss, close the pool. */
  close(): Promise<void>;
}

/**
 * Several daemons on one PostgreSQL database: pg-boss carries the runs to
 * whichever daemon has a free slot; `fire_claims` makes each fire time of
 * each automation run once; `run_locks` with leases keeps one run per
 * automation across machines and finds the runs of a daemon that died.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const leaseMs = options.leaseMs ?? 60_000;
  if (!Number.isFinite(leaseMs) || leaseMs < MIN_LEASE_MS) {
    throw new ConveyorError("settings_invalid", `run_lease: ${leaseMs} ms is too short; use at least ${MIN_LEASE_MS / 1000}s (runs renew their heartbeat every 10 s)`);
  }
  const daemon = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const { pool, target } = await openSharedPool(options.databaseUrl, { max: Math.max(3, Math.min(options.concurrency + 2, 8)), name: "conveyor-cluster" });
  const bossSchema = `${target.schema}_queue`;
  const jobOptions = { retryLimit: 0, expireInSeconds: Math.min(MAX_EXPIRE_SECONDS, Math.ceil((options.maxRunTimeMs + leaseMs) / 1000) + 60) };
  let boss: PgBoss | undefined;
  try {
    await ensureClusterSchema(pool);
    // migrate (pg-boss's default, stated here on purpose): a queue schema of pg-boss 11 or later is brought up to date in start().
    boss = new PgBoss({ connectionString: target.connectionString, schema: bossSchema, max: 3, application_name: "conveyor-queue", schedule: false, migrate: true });
    boss.on("error", (err) => options.logger.error({ err: maskSecrets(err.message) }, "the shared run queue reported an error"));
    await openRunQueue(pool, boss, { bossSchema, jobOptions, logger: options.logger });
  } catch (err) {
    await boss?.stop({ graceful: false }).catch(() => undefined);
    await pool.end().catch(() => undefined);
    if (err instanceof ConveyorError) throw err;
    throw new ConveyorError("state", `cannot start the shared run queue in PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
      cause: err,
      hint: "the database user needs CREATE on the database (pg-boss keeps its tables in schema " + bossSchema + ")",
    });
  }
  return assemble(options, { daemon, pool, boss, bossSchema, expireInSeconds: jobOptions.expireInSeconds, leaseMs });
}

/**
 * Starts pg-boss and makes sure the run queue exists, one daemon of the
 * cluster at a time: pg-boss's createQueue deadlocks when daemons starting
 * together create the queue at once, and a pg-boss 10 queue is carried over
 * by exactly one of them.
 */
async function openRunQueue(pool: pg.Pool, boss: PgBoss, parts: { bossSchema: string; jobOptions: SendOptions; logger: Logger }): Promise<void> {
  const { bossSchema, jobOptions, logger } = parts;
  const lockKey = `conveyor.run_queue:${bossSchema}`;
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [lockKey]);
    await setAsideOldQueue(client, bossSchema);
    await boss.start();
    if (!(await boss.getQueue(RUN_QUEUE))) await boss.createQueue(RUN_QUEUE, { policy: "standard", retryLimit: 0 });
    await moveOldRuns(client, boss, bossSchema, jobOptions, logger);
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [lockKey]).catch(() => undefined);
    client.release();
  }
}

/**
 * Counted live in pg-boss's job table (its documented SQL interface): its own
 * queue statistics are a cache refreshed once a monitor interval, and a gauge
 * read right after a send must already show the run.
 */
async function queueDepth(pool: pg.Pool, bossSchema: string): Promise<{ waiting: number; running: number }> {
  const counted = await pool.query<{ waiting: number; running: number }>(
    `SELECT count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting, count(*) FILTER (WHERE state = 'active')::int AS running
     FROM ${quoteIdent(bossSchema)}.job WHERE name = $1`,
    [RUN_QUEUE],
  );
  return counted.rows[0] ?? { waiting: 0, running: 0 };
}

async function assemble(options: ClusterOptions, parts: { daemon: string; pool: pg.Pool; boss: PgBoss; bossSchema: string; expireInSeconds: number; leaseMs: number }): Promise<Cluster> {
  const { daemon, pool, boss, bossSchema, expireInSeconds, leaseMs } = parts;
  const { logger, queue } = options;
  const intake = new ClusterIntake({
    boss,
    pool,
    daemon,
    expireInSeconds,
    isDraining: () => queue.isDraining,
    // Called only once a run is sent, long after the dispatcher below exists.
    wake: () => dispatcher.wake(),
  });
  const dispatcher = new ClusterDispatcher({
    boss,
    pool,
    intake,
    queue,
    schedulerState: options.schedulerState,
    daemon,
    concurrency: options.concurrency,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
    lockPollMs: 1_000,
    logger,
  });
  const leases = new LeaseKeeper({ pool, store: options.store, daemon, leaseMs, logger, ...(options.onRecovered ? { onRecovered: options.onRecovered } : {}) });
  leases.start();
  await dispatcher.start();
  logger.info({ event: "cluster_joined", daemon, lease_ms: leaseMs }, "joined the cluster: runs come from the shared queue in PostgreSQL");
  let closed: Promise<void> | undefined;
  return {
    daemon,
    intake,
    stopFetching: () => dispatcher.stopFetching(),
    depth: () => queueDepth(pool, bossSchema),
    running: async () =>
      (await pool.query<{ daemon: string; running: number }>('SELECT daemon, count(*)::int AS running FROM run_locks GROUP BY daemon ORDER BY daemon COLLATE "C"')).rows,
    close: () => {
      closed ??= (async () => {
        await dispatcher.stopFetching().catch(() => undefined);
        await leases.stop();
        await boss.stop({ graceful: true, timeout: 5_000 }).catch((err: unknown) => logger.warn({ err }, "stopping the shared run queue failed"));
        await leases.releaseAll().catch((err: unknown) => logger.warn({ err }, "could not release this daemon's run locks; their lease runs out instead"));
        await pool.end();
      })();
      return closed;
    },
  };
}
