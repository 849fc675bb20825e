import type pg from "pg";
import type { PgBoss, SendOptions } from "pg-boss";
import { ConveyorError } from "../../errors.js";
import { newRunId } from "../../pipeline/recorder.js";
import type { RunMode } from "../../state/index.js";
import { inTransaction } from "../../state/pg-connect.js";
import type { EnqueueResult, RunInfo, SkipReason } from "../queue.js";
import type { QueuedRun, RunRequest } from "../types.js";

/** The one pg-boss queue every daemon's runs go through. */
export const RUN_QUEUE = "conveyor-runs";

/** What the scheduler gets back for a tick: queued, skipped (recorded by it), or taken by another daemon. */
export type TickResult = EnqueueResult | { skipped: SkipReason } | { claimedBy: string };

/** Joins an automation key and the run an undo takes back: `#` is in no slug or id. */
const UNDO_SLOT = "#undo:";

/**
 * The `run_waiting` slot of a request: the automation's own, or for an undo
 * one of its own per run taken back, so an undo never joins the automation's
 * waiting run (nor that run an undo). The automation lock still runs them one
 * at a time.
 */
function waitingSlot(request: RunRequest): string {
  return request.undo ? `${request.automation}${UNDO_SLOT}${request.undo.of}` : request.automation;
}

export interface RunJob {
  run: QueuedRun;
}

/** pg-boss runs its statements on our transaction's connection, so the job and our rows commit together. */
export function adapter(client: pg.PoolClient): { executeSql(text: string, values: unknown[]): Promise<{ rows: unknown[] }> } {
  return { executeSql: (text, values) => client.query(text, values) };
}

export interface IntakeOptions {
  boss: PgBoss;
  pool: pg.Pool;
  daemon: string;
  /** pg-boss's own expiry of an active job; longer than max_run_time so only our lease decides. */
  expireInSeconds: number;
  isDraining: () => boolean;
  /** Wakes this daemon's idle workers, so a run sent here starts without waiting for a poll. */
  wake: () => void;
}

/**
 * How runs enter the cluster's queue. A schedule tick is first claimed in
 * `fire_claims` (automation + fire time, unique): all daemons fire every tick,
 * and only the one whose row goes in acts on it, in the same transaction as
 * the job it sends, so a claimed fire time always has its job or its skip.
 * Manual and API runs are sent straight away; whichever daemon has a free
 * slot takes them. `run_waiting` holds the one waiting run per automation and
 * mode (a second request joins it, a tick is skipped as "waiting").
 */
export class ClusterIntake {
  constructor(private readonly options: IntakeOptions) {}

  async enqueue(request: RunRequest): Promise<EnqueueResult> {
    this.refuseWhileDraining(request);
    const outcome = await inTransaction(this.options.pool, (client) => this.queueRun(client, request));
    if ("existing" in outcome) return outcome;
    this.options.wake();
    return outcome;
  }

  async offerTick(request: RunRequest): Promise<TickResult> {
    const fireTime = request.fireTime;
    if (!fireTime) return this.enqueue(request);
    const outcome = await inTransaction(this.options.pool, async (client): Promise<TickResult> => {
      const claimed = await client.query("INSERT INTO fire_claims (automation, fire_time, daemon) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [
        request.automation,
        fireTime,
        this.options.daemon,
      ]);
      if (claimed.rowCount !== 1) {
        const winner = await client.query<{ daemon: string }>("SELECT daemon FROM fire_claims WHERE automation = $1 AND fire_time = $2", [request.automation, fireTime]);
        return { claimedBy: winner.rows[0]?.daemon ?? "another daemon" };
      }
      const running = await client.query("SELECT 1 FROM run_locks WHERE automation = $1", [request.automation]);
      const result: TickResult = running.rowCount ? { skipped: "running" } : await this.queueRun(client, request);
      const skipped = "skipped" in result ? result.skipped : "existing" in result && result.existing ? "waiting" : null;
      await client.query("UPDATE fire_claims SET run_id = $3, skipped = $4 WHERE automation = $1 AND fire_time = $2", [
        request.automation,
        fireTime,
        skipped ? null : "id" in result ? result.id : null,
        skipped,
      ]);
      return skipped ? { skipped: skipped === "running" ? "running" : "waiting" } : result;
    });
    if ("id" in outcome) this.options.wake();
    return outcome;
  }

  /** A run waiting in the cluster's queue (on any daemon), for the API's run look-up; null once it started or when unknown. */
  async waiting(id: string): Promise<RunInfo | null> {
    const found = await this.options.pool.query<{ automation: string; mode: RunMode; enqueued: Date }>("SELECT automation, mode, enqueued FROM run_waiting WHERE run_id = $1", [id]);
    const row = found.rows[0];
    return row ? { id, automation: row.automation.split(UNDO_SLOT)[0] ?? row.automation, mode: row.mode, state: "waiting", enqueued: row.enqueued.toISOString(), started: null } : null;
  }

  /** Send a run a daemon took but cannot start (it is stopping) back to the queue, under the same id. */
  async requeue(run: QueuedRun): Promise<void> {
    await inTransaction(this.options.pool, async (client) => {
      await client.query("UPDATE run_waiting SET daemon = NULL, heartbeat = NULL WHERE run_id = $1", [run.id]);
      const job: RunJob = { run };
      await this.options.boss.send(RUN_QUEUE, job, { ...this.jobOptions(), db: adapter(client) });
    });
  }

  /**
   * The run becomes the automation's waiting run and its job is sent, in one
   * transaction; when a run of this automation and mode waits already, the
   * request joins it and gets its id.
   */
  private async queueRun(client: pg.PoolClient, request: RunRequest): Promise<EnqueueResult> {
    const id = newRunId();
    const waiting = await client.query<{ run_id: string }>(
      `INSERT INTO run_waiting (automation, mode, run_id) VALUES ($1, $2, $3)
       ON CONFLICT (automation, mode) DO UPDATE SET run_id = run_waiting.run_id RETURNING run_id`,
      [waitingSlot(request), request.mode, id],
    );
    const holder = waiting.rows[0]?.run_id;
    if (holder && holder !== id) return { id: holder, queued: true, existing: true };
    const job: RunJob = { run: { ...request, id } };
    await this.options.boss.send(RUN_QUEUE, job, { ...this.jobOptions(), db: adapter(client) });
    return { id, queued: true };
  }

  private jobOptions(): SendOptions {
    return { retryLimit: 0, expireInSeconds: this.options.expireInSeconds };
  }

  private refuseWhileDraining(request: RunRequest): void {
    if (!this.options.isDraining()) return;
    throw new ConveyorError("canceled", `the daemon is shutting down; the run of ${request.automation} was not queued`, {
      retryable: true,
      hint: "send the request to another daemon of the cluster, or again once this one has restarted",
    });
  }
}
