import { ConveyorError } from "../errors.js";
import { silentLogger, type Logger } from "../log.js";
import { CronSchedule } from "./cron-time.js";
import { IntervalSchedule, intervalOffset } from "./interval-time.js";
import type { TickResult } from "./cluster/intake.js";
import type { FinishedEvent, RunQueue } from "./queue.js";
import { systemClock, type Clock, type RunRequest, type SchedulableAutomation, type SchedulerState, type TimerHandle } from "./types.js";

export interface SchedulerOptions {
  queue: RunQueue;
  /**
   * Several daemons on one database: ticks go to the cluster, which lets one
   * daemon claim each fire time (cluster/intake.ts). Without it, to `queue`.
   */
  intake?: { offerTick(request: RunRequest): Promise<TickResult> };
  state: SchedulerState;
  /** A scheduled run is a full run (`diff=false`) when the last good full run is older than this. */
  fullRunEveryMs: number;
  clock?: Clock;
  logger?: Logger;
  /** Longest sleep between wake-ups, so a suspended machine or a stepped clock is noticed soon. */
  maxSleepMs?: number;
}

export interface SyncReport {
  scheduled: string[];
  /** Automations left unscheduled because their schedule or timezone is invalid. */
  invalid: Array<{ key: string; message: string }>;
}

/** A cron pattern, or a fixed interval (the catch-up of an automation started by events). */
interface FireTimes {
  next(after: Date): Date | null;
  previous(at: Date): Date | null;
}

interface Entry {
  automation: SchedulableAutomation;
  schedule: FireTimes;
  next: Date | null;
}

function fireTimes(a: SchedulableAutomation): FireTimes {
  if (a.schedule.trim() === "" && a.everyMs !== undefined) return new IntervalSchedule(a.everyMs, intervalOffset(a.key, a.everyMs));
  return new CronSchedule(a.schedule, a.timezone);
}

/** Outcomes after which the snapshot holds every record, so diff runs may follow. */
const FULL_RUN_DONE = new Set(["success", "partial", "nothing"]);

/**
 * Fires each active, non-draft automation at its cron times and hands the run
 * to the queue. One timer for all automations; state changes go through one
 * promise chain so a tick never reads bookkeeping half written by another.
 */
export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly maxSleepMs: number;
  private readonly unsubscribe: () => void;
  private timer: TimerHandle | null = null;
  private chain: Promise<void> = Promise.resolve();
  private synced = false;
  private stopped = false;

  constructor(private readonly options: SchedulerOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.maxSleepMs = options.maxSleepMs ?? 60_000;
    this.unsubscribe = options.queue.on("finished", (event) => this.onFinished(event));
  }

  /**
   * Make the schedule match the definitions: add, remove, and reschedule at once
   * whatever changed. The first call after start also runs one catch-up run for
   * each automation whose fire time passed while the daemon was down.
   */
  sync(automations: readonly SchedulableAutomation[]): Promise<SyncReport> {
    const result = this.chain.then(() => this.apply(automations));
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /**
   * Stop firing; runs already queued are the queue's to finish, and a full run
   * that ends during the shutdown is still recorded. Resolves when pending
   * bookkeeping is written.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    await this.chain;
  }

  /** After the queue has drained: stop listening to it as well. */
  async close(): Promise<void> {
    await this.stop();
    this.unsubscribe();
    await this.chain;
  }

  /** The next fire time of a scheduled automation, for status and metrics. */
  nextFire(key: string): Date | null {
    return this.entries.get(key)?.next ?? null;
  }

  scheduled(): string[] {
    return [...this.entries.keys()];
  }

  private async apply(automations: readonly SchedulableAutomation[]): Promise<SyncReport> {
    if (this.stopped) throw new ConveyorError("internal", "the scheduler is stopped; sync after stop() does nothing");
    const now = new Date(this.clock.now());
    const first = !this.synced;
    this.synced = true;
    const wanted = new Map(automations.filter((a) => a.active && !a.draft && (a.schedule.trim() !== "" || a.everyMs !== undefined)).map((a) => [a.key, a]));
    for (const key of this.entries.keys()) if (!wanted.has(key)) this.entries.delete(key);
    const added: Entry[] = [];
    const invalid: SyncReport["invalid"] = [];
    for (const automation of wanted.values()) {
      const current = this.entries.get(automation.key);
      if (current && sameSchedule(current.automation, automation)) {
        current.automation = automation;
        continue;
      }
      let schedule: FireTimes;
      try {
        schedule = fireTimes(automation);
      } catch (err) {
        this.entries.delete(automation.key);
        const message = (err as Error).message;
        invalid.push({ key: automation.key, message });
        this.logger.error({ automation: automation.key, err }, "automation not scheduled");
        continue;
      }
      const entry: Entry = { automation, schedule, next: schedule.next(now) };
      this.entries.set(automation.key, entry);
      if (!current) added.push(entry);
      else this.logger.info({ automation: automation.key, next: entry.next?.toISOString() ?? null }, "automation rescheduled");
    }
    this.arm();
    for (const entry of added) await this.catchUp(entry, now, first);
    return { scheduled: this.scheduled(), invalid };
  }

  /**
   * At start, one run for the latest fire time missed while the daemon was down
   * (not one per missed tick). An automation seen for the first time, or added
   * while the daemon runs, starts counting from now: it has missed nothing.
   */
  private async catchUp(entry: Entry, now: Date, atStart: boolean): Promise<void> {
    const key = entry.automation.key;
    const last = await this.options.state.lastFireTime(key);
    if (atStart && last !== null) {
      const missed = entry.schedule.previous(now);
      if (missed && missed.getTime() > Date.parse(last)) {
        this.logger.info({ event: "run_catch_up", automation: key, fire_time: missed.toISOString(), last_fire: last }, "catching up a fire time missed while down");
        await this.fire(entry, missed, "catch-up");
      }
      return;
    }
    await this.options.state.setLastFireTime(key, now.toISOString());
  }

  private arm(): void {
    if (this.timer) this.clock.clearTimer(this.timer);
    this.timer = null;
    if (this.stopped) return;
    let earliest = Infinity;
    for (const entry of this.entries.values()) if (entry.next) earliest = Math.min(earliest, entry.next.getTime());
    if (earliest === Infinity) return;
    const delay = Math.min(Math.max(earliest - this.clock.now(), 0), this.maxSleepMs);
    this.timer = this.clock.setTimer(() => this.wake(), delay);
  }

  private wake(): void {
    this.timer = null;
    if (this.stopped) return;
    const now = new Date(this.clock.now());
    for (const entry of this.entries.values()) {
      if (!entry.next || entry.next.getTime() > now.getTime()) continue;
      // After a sleep past several fire times they fold into one run for the latest of them.
      const fireTime = entry.schedule.previous(now) ?? entry.next;
      entry.next = entry.schedule.next(now);
      this.enqueueTask(() => this.fire(entry, fireTime, "tick"));
    }
    this.arm();
  }

  private async fire(entry: Entry, fireTime: Date, kind: "tick" | "catch-up"): Promise<void> {
    const key = entry.automation.key;
    const iso = fireTime.toISOString();
    const lastFull = await this.options.state.lastFullRun(key);
    // A definition edited meanwhile still gets this tick, with its current account and settings;
    // one removed or deactivated meanwhile does not.
    const a = this.entries.get(key)?.automation;
    if (!a || this.stopped || this.options.queue.isDraining) return;
    const full = !a.diffOnly && (lastFull === null || this.clock.now() - Date.parse(lastFull) >= this.options.fullRunEveryMs);
    const request: RunRequest = {
      automation: a.key,
      account: a.account,
      mode: "prod",
      trigger: "schedule",
      diff: !full,
      force: false,
      notify: a.notify ?? false,
      email: a.email ?? null,
      fireTime: iso,
    };
    const result = this.options.intake ? await this.options.intake.offerTick(request) : this.options.queue.offerTick(request);
    if ("claimedBy" in result) {
      this.logger.debug({ automation: a.key, fire_time: iso, daemon: result.claimedBy, kind }, "fire time taken by another daemon");
    } else if ("skipped" in result) {
      // The queue's run_skipped line is the one run event; this adds the fire's kind at debug level.
      this.logger.debug({ automation: a.key, fire_time: iso, reason: result.skipped, kind }, "scheduled run skipped");
      await this.options.state.recordSkip(a.key, iso, result.skipped);
    } else {
      this.logger.debug({ automation: a.key, fire_time: iso, run_id: result.id, diff: request.diff, kind }, "scheduled run queued");
    }
    await this.options.state.setLastFireTime(a.key, iso);
  }

  private onFinished(event: FinishedEvent): void {
    const { run } = event;
    // A clustered daemon hands a run it never started back to the shared queue, where it still runs.
    if (!event.started && event.reason === "shutdown" && run.fireTime && !this.options.intake) {
      const fireTime = run.fireTime;
      this.enqueueTask(() => this.options.state.reopenFireTime(run.automation, fireTime));
      return;
    }
    if (!event.started || event.startedAt === null || run.mode !== "prod" || run.diff || !FULL_RUN_DONE.has(event.outcome)) return;
    const startedAt = event.startedAt;
    this.enqueueTask(() => this.options.state.setLastFullRun(run.automation, startedAt));
  }

  private enqueueTask(task: () => Promise<void>): void {
    this.chain = this.chain.then(task).catch((err: unknown) => {
      this.logger.error({ err }, "scheduler bookkeeping failed");
    });
  }
}

function sameSchedule(a: SchedulableAutomation, b: SchedulableAutomation): boolean {
  return a.version === b.version && a.schedule === b.schedule && a.timezone === b.timezone && a.everyMs === b.everyMs && a.diffOnly === b.diffOnly;
}
