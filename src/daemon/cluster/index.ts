import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type pg from "pg";
import PgBoss from "pg-boss";
import { ConveyorError } from "../../errors.js";
import type { Logger } from "../../log.js";
import { maskSecrets } from "../../secrets.js";
import { openSharedPool } from "../../service/pg-pool.js";
import type { RunRecord, StateStore } from "../../state/index.js";
import type { RunQueue } from "../queue.js";
import type { SchedulerState } from "../types.js";
import { ClusterDispatcher } from "./dispatcher.js";
import { ClusterIntake, RUN_QUEUE } from "./intake.js";
import { LeaseKeeper } from "./leases.js";
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
  let boss: PgBoss | undefined;
  try {
    await ensureClusterSchema(pool);
    boss = new PgBoss({ connectionString: target.connectionString, schema: bossSchema, max: 3, application_name: "conveyor-queue", schedule: false });
    boss.on("error", (err) => options.logger.error({ err: maskSecrets(err.message) }, "the shared run queue reported an error"));
    await boss.start();
    await createRunQueue(pool, boss);
  } catch (err) {
    await boss?.stop({ graceful: false, wait: true }).catch(() => undefined);
    await pool.end().catch(() => undefined);
    if (err instanceof ConveyorError) throw err;
    throw new ConveyorError("state", `cannot start the shared run queue in PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
      cause: err,
      hint: "the database user needs CREATE on the database (pg-boss keeps its tables in schema " + bossSchema + ")",
    });
  }
  return assemble(options, { daemon, pool, boss, leaseMs });
}

/** pg-boss's createQueue deadlocks when daemons starting together create the queue at once: they take turns. */
async function createRunQueue(pool: pg.Pool, boss: PgBoss): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext('conveyor.run_queue'))");
    if (!(await boss.getQueue(RUN_QUEUE))) await boss.createQueue(RUN_QUEUE, { name: RUN_QUEUE, policy: "standard", retryLimit: 0 });
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtext('conveyor.run_queue'))").catch(() => undefined);
    client.release();
  }
}

async function assemble(options: ClusterOptions, parts: { daemon: string; pool: pg.Pool; boss: PgBoss; leaseMs: number }): Promise<Cluster> {
  const { daemon, pool, boss, leaseMs } = parts;
  const { logger, queue } = options;
  const intake = new ClusterIntake({
    boss,
    pool,
    daemon,
    expireInSeconds: Math.min(MAX_EXPIRE_SECONDS, Math.ceil((options.maxRunTimeMs + leaseMs) / 1000) + 60),
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
    async depth() {
      const waiting = await boss.getQueueSize(RUN_QUEUE);
      const taken = await boss.getQueueSize(RUN_QUEUE, { before: "completed" });
      return { waiting, running: Math.max(0, taken - waiting) };
    },
    close: () => {
      closed ??= (async () => {
        await dispatcher.stopFetching().catch(() => undefined);
        await leases.stop();
        await boss.stop({ graceful: true, wait: true, timeout: 5_000 }).catch((err: unknown) => logger.warn({ err }, "stopping the shared run queue failed"));
        await leases.releaseAll().catch((err: unknown) => logger.warn({ err }, "could not release this daemon's run locks; their lease runs out instead"));
        await pool.end();
      })();
      return closed;
    },
  };
}
