import type pg from "pg";
import type { Job, PgBoss } from "pg-boss";
import type { Logger } from "../../log.js";
import { sleep } from "../../retry.js";
import { inTransaction } from "../../state/pg-connect.js";
import type { RunQueue } from "../queue.js";
import type { QueuedRun, SchedulerState } from "../types.js";
import { RUN_QUEUE, type ClusterIntake, type RunJob } from "./intake.js";

export interface DispatcherOptions {
  boss: PgBoss;
  pool: pg.Pool;
  intake: ClusterIntake;
  /** This daemon's runs execute here: its concurrency, max_run_time, cancel and drain. */
  queue: RunQueue;
  schedulerState: Pick<SchedulerState, "recordSkip">;
  daemon: string;
  concurrency: number;
  pollingIntervalSeconds: number;
  /** How often a manual run waiting for its automation's running run asks again. */
  lockPollMs: number;
  logger: Logger;
}

/**
 * Takes runs off the shared queue while this daemon has a free slot (one
 * pg-boss worker per slot, each holding its job until the run ends) and runs
 * them in the local queue. Before a run starts, its automation's row in
 * `run_locks` is taken: that row, not the queue, is what keeps one automation
 * from running on two daemons at once.
 */
export class ClusterDispatcher {
  private readonly workerIds: string[] = [];
  private stopping = false;

  constructor(private readonly options: DispatcherOptions) {}

  async start(): Promise<void> {
    const { boss, concurrency, pollingIntervalSeconds } = this.options;
    for (let i = 0; i < concurrency; i++) {
      this.workerIds.push(await boss.work<RunJob>(RUN_QUEUE, { batchSize: 1, pollingIntervalSeconds }, (jobs) => this.handle(jobs)));
    }
  }

  /** A run was sent: let idle workers fetch now instead of at their next poll. */
  wake(): void {
    for (const id of this.workerIds) this.options.boss.notifyWorker(id);
  }

  /**
   * Take no more jobs; runs already taken go on in the local queue, which the
   * daemon drains. Not waiting for them here (pg-boss waits by default): the
   * daemon's grace period, not this call, decides how long they may run.
   */
  async stopFetching(): Promise<void> {
    this.stopping = true;
    await this.options.boss.offWork(RUN_QUEUE, { wait: false });
  }

  private async handle(jobs: Job<RunJob>[]): Promise<void> {
    for (const job of jobs) await this.runJob(job.data.run);
  }

  private async runJob(run: QueuedRun): Promise<void> {
    const { logger } = this.options;
    if (!(await this.lock(run))) return;
    try {
      await this.runLocally(run);
    } finally {
      await this.options.pool
        .query("DELETE FROM run_locks WHERE automation = $1 AND run_id = $2", [run.automation, run.id])
        .catch((err: unknown) => logger.error({ err, run_id: run.id }, "could not release the automation's run lock; its lease runs out instead"));
    }
  }

  /**
   * True once this daemon holds the automation's lock; the run then no longer
   * waits. A schedule tick that finds its automation running is skipped and
   * recorded; a manual or API run waits here for the running one to end, its
   * waiting row leased to this daemon meanwhile.
   */
  private async lock(run: QueuedRun): Promise<boolean> {
    const { pool, daemon, logger } = this.options;
    await pool.query("UPDATE run_waiting SET daemon = $2, heartbeat = now() WHERE run_id = $1", [run.id, daemon]);
    for (;;) {
      const taken = await inTransaction(this.options.pool, async (client) => {
        const lock = await client.query("INSERT INTO run_locks (automation, run_id, daemon) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [run.automation, run.id, daemon]);
        if (lock.rowCount !== 1 && run.trigger !== "schedule") return false;
        await client.query("DELETE FROM run_waiting WHERE run_id = $1", [run.id]);
        return lock.rowCount === 1;
      });
      if (taken) return true;
      if (run.trigger === "schedule") {
        logger.info({ event: "run_skipped", automation: run.automation, fire_time: run.fireTime ?? null, reason: "running" }, "scheduled run skipped");
        await this.options.schedulerState.recordSkip(run.automation, run.fireTime ?? new Date().toISOString(), "running");
        return false;
      }
      if (this.stopping || this.options.queue.isDraining) {
        await this.handBack(run);
        return false;
      }
      await sleep(this.options.lockPollMs);
    }
  }

  /** Resolves when the local queue has finished (or dropped) the run. */
  private runLocally(run: QueuedRun): Promise<void> {
    const { queue } = this.options;
    return new Promise<void>((resolve) => {
      const off = queue.on("finished", (event) => {
        if (event.run.id !== run.id) return;
        off();
        resolve();
      });
      try {
        // Folded into a run of the automation waiting here already (a lease taken over from a slow daemon): that one stands for it.
        if (queue.enqueue(run).existing) {
          off();
          resolve();
        }
      } catch (err) {
        // Draining: the daemon stops. The run has not started; another daemon takes it.
        off();
        this.options.logger.info({ run_id: run.id, err: (err as Error).message }, "run handed back to the cluster queue");
        void this.handBack(run).then(resolve, resolve);
      }
    });
  }

  private async handBack(run: QueuedRun): Promise<void> {
    await this.options.intake.requeue(run).catch((err: unknown) => this.options.logger.error({ err, run_id: run.id }, "could not hand a run back to the cluster queue"));
  }
}
