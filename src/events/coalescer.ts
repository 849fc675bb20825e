import type { Logger } from "../log.js";
import type { EnqueueResult } from "../daemon/queue.js";
import type { RunRequest } from "../daemon/types.js";

export interface CoalescerOptions {
  /** CONVEYOR_EVENT_WINDOW: how long the first event waits for others before its run is asked for. */
  windowMs: number;
  /** The cluster's intake when there is one, else the local queue. */
  enqueue: (request: RunRequest) => Promise<EnqueueResult>;
  /** The account of an automation, or null when it no longer runs on events (its events then start nothing). */
  accountOf: (automation: string) => Promise<string | null>;
  hasPending: (automation: string) => Promise<boolean>;
  logger: Logger;
}

/**
 * Turns a stream of events into few runs: the first event for an automation
 * arms a timer, and when the window has passed one event run is asked for.
 * The run takes its batch when it starts, so events arriving while it waits
 * ride along, and a request folded into a waiting run is harmless; events
 * arriving while it runs wait for `finished`, which arms the timer again.
 * A timer that finds nothing pending asks for nothing: a run queued before
 * the previous one ended took those events when it started.
 * Any daemon of a cluster may arm: the atomic take runs each event once.
 */
export class Coalescer {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly options: CoalescerOptions) {}

  /** Events for these automations were stored. */
  arm(automations: Iterable<string>): void {
    if (this.stopped) return;
    for (const automation of automations) {
      if (this.timers.has(automation)) continue;
      const timer = setTimeout(() => {
        this.timers.delete(automation);
        void this.fire(automation);
      }, this.options.windowMs);
      timer.unref();
      this.timers.set(automation, timer);
    }
  }

  /** A run of the automation ended (any trigger): what arrived meanwhile gets its run. */
  async finished(automation: string): Promise<void> {
    if (this.stopped) return;
    if (await this.options.hasPending(automation)) this.arm([automation]);
  }

  /** True while a run of the automation is armed and not yet asked for. */
  isArmed(automation: string): boolean {
    return this.timers.has(automation);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async fire(automation: string): Promise<void> {
    const { logger } = this.options;
    try {
      if (!(await this.options.hasPending(automation))) return;
      const account = await this.options.accountOf(automation);
      if (account === null) {
        logger.debug({ event: "event_run_skipped", automation }, "events wait for an automation that no longer runs on events; nothing is run");
        return;
      }
      const queued = await this.options.enqueue({ automation, account, mode: "prod", trigger: "event", diff: true, force: false, notify: false, email: null });
      logger.info({ event: "event_run_queued", automation, run_id: queued.id, joined: queued.existing === true }, "events started a run");
    } catch (err) {
      // Shutting down, or the database did not answer: the claims stay pending; the next start (or event) arms again.
      logger.warn({ event: "event_run_not_queued", automation, err: (err as Error).message }, "the run for waiting events could not be queued");
    }
  }
}
