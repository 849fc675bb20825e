import type { Logger } from "../log.js";
import type { RunEvents } from "../daemon/types.js";
import type { RunRecord } from "../state/index.js";
import type { EventStore } from "./store.js";

/** The most events one run takes; the rest wait for the next run, which the coalescer arms when this one ends. */
export const MAX_BATCH = 1000;
/** Runs that may fail on an event before its claim is left `failed` (the catch-up schedule then covers its order). */
export const MAX_ATTEMPTS = 5;

const DONE_OUTCOMES = new Set(["success", "partial", "nothing"]);

export interface ClaimsOptions {
  store: EventStore;
  logger: Logger;
  getRun: (id: string) => Promise<RunRecord | null>;
  /** The run waits or runs in this daemon's queue, or (cluster) holds its lock or waits in the shared queue. */
  isActive: (runId: string) => Promise<boolean>;
}

/**
 * What an event run does with the events waiting for its automation: takes
 * them when it starts (each claim by exactly one run, across daemons), and
 * settles them when it ends. A run that ends without settling (a daemon
 * killed mid-run) is found by `recover`, which the daemon calls at start and
 * then now and again.
 */
export class EventClaims {
  constructor(private readonly options: ClaimsOptions) {}

  take(automation: string, runId: string, max = MAX_BATCH): Promise<RunEvents> {
    return this.options.store.take(automation, runId, max);
  }

  /** A run that succeeded (in part, or with nothing to send) is done with its events; any other outcome hands them back. */
  async settle(runId: string, outcome: string): Promise<void> {
    const done = DONE_OUTCOMES.has(outcome);
    const result = await this.options.store.settle(runId, done, MAX_ATTEMPTS);
    if (result.failed.length > 0) {
      this.options.logger.error(
        { event: "events_failed", run_id: runId, events: result.failed, attempts: MAX_ATTEMPTS },
        `${result.failed.length} event(s) failed in ${MAX_ATTEMPTS} runs and are no longer retried; the automation's schedule picks up their orders`,
      );
    } else if (!done && result.settled > 0) {
      this.options.logger.warn({ event: "events_released", run_id: runId, count: result.settled, outcome }, "the run did not finish its events; they wait for the next run");
    }
  }

  /**
   * Claims whose run will never settle them: the run finished (settled as its
   * outcome says: a kill after the run's record but before the settle), was
   * interrupted, or has no record and waits nowhere. A run still open, or
   * queued, keeps its claims. Returns how many runs were settled.
   */
  async recover(): Promise<number> {
    const { store, getRun, isActive, logger } = this.options;
    let count = 0;
    for (const runId of await store.takenRuns()) {
      const run = await getRun(runId);
      if (run && !run.finished) continue;
      if (!run && (await isActive(runId))) continue;
      await this.settle(runId, run?.outcome ?? "failed");
      count++;
    }
    if (count > 0) logger.info({ event: "events_recovered", runs: count }, "events taken by runs that ended without settling them were settled");
    return count;
  }
}
