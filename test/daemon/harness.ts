import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { vi } from "vitest";
import { RunQueue, type FinishedEvent } from "../../src/daemon/queue.js";
import { Scheduler } from "../../src/daemon/scheduler.js";
import { SqliteSchedulerState } from "../../src/daemon/scheduler-state.js";
import type { QueuedRun, RunExecutor, SchedulableAutomation } from "../../src/daemon/types.js";

export interface ExecutedRun {
  run: QueuedRun;
  started: number;
  ended: number | null;
  outcome: string | null;
}

/**
 * Stands in for the run pipeline: each run takes a set time on the (fake) clock,
 * ends early with `canceled` when its signal aborts, and records what it saw so
 * tests can check overlap and concurrency.
 */
export class TimedExecutor implements RunExecutor {
  readonly runs: ExecutedRun[] = [];
  maxConcurrent = 0;
  overlapped = false;
  durations = new Map<string, number>();
  outcomes = new Map<string, string>();
  /** Ignore the abort signal (a pipeline that does not honour it). */
  deaf = false;
  private active = 0;

  constructor(public defaultMs = 60_000) {}

  execute(run: QueuedRun, signal: AbortSignal): Promise<{ outcome: string }> {
    if (this.runs.some((r) => r.run.automation === run.automation && r.ended === null)) this.overlapped = true;
    const record: ExecutedRun = { run, started: Date.now(), ended: null, outcome: null };
    this.runs.push(record);
    this.active++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.active);
    const ms = this.durations.get(run.automation) ?? this.defaultMs;
    return new Promise((resolve) => {
      const end = (outcome: string): void => {
        clearTimeout(timer);
        this.active--;
        record.ended = Date.now();
        record.outcome = outcome;
        resolve({ outcome });
      };
      const timer = setTimeout(() => end(this.outcomes.get(run.automation) ?? "success"), ms);
      if (!this.deaf) signal.addEventListener("abort", () => end("canceled"), { once: true });
    });
  }

  of(automation: string): ExecutedRun[] {
    return this.runs.filter((r) => r.run.automation === automation);
  }
}

export function automation(key: string, schedule: string, extra: Partial<SchedulableAutomation> = {}): SchedulableAutomation {
  return { key, account: "acct", schedule, timezone: "UTC", active: true, draft: false, version: "1", ...extra };
}

export interface Rig {
  dir: string;
  state: SqliteSchedulerState;
  executor: TimedExecutor;
  queue: RunQueue;
  scheduler: Scheduler;
  finished: FinishedEvent[];
  /** Simulates the daemon going down: the scheduler and the queue stop, the state file stays. */
  crash(): Promise<void>;
  /** A fresh daemon over the same state file. */
  restart(): Rig;
  cleanup(): Promise<void>;
}

export interface RigOptions {
  concurrency?: number;
  maxRunTimeMs?: number;
  fullRunEveryMs?: number;
  runMs?: number;
  dir?: string;
}

export function rig(options: RigOptions = {}): Rig {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), "conveyor-sched-"));
  const state = SqliteSchedulerState.inDataDir(dir, () => Date.now());
  const executor = new TimedExecutor(options.runMs ?? 60_000);
  const queue = new RunQueue({ executor, concurrency: options.concurrency ?? 4, maxRunTimeMs: options.maxRunTimeMs ?? 2 * 3600_000 });
  const scheduler = new Scheduler({ queue, state, fullRunEveryMs: options.fullRunEveryMs ?? 24 * 3600_000 });
  const finished: FinishedEvent[] = [];
  queue.on("finished", (e) => finished.push(e));
  const crash = async (): Promise<void> => {
    await scheduler.close();
    queue.cancelAll();
    await vi.advanceTimersByTimeAsync(0);
    await state.close();
  };
  return {
    dir,
    state,
    executor,
    queue,
    scheduler,
    finished,
    crash,
    restart: () => rig({ ...options, dir }),
    cleanup: async () => {
      await crash().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Local wall time of an instant, `YYYY-MM-DD HH:mm`, for readable assertions. */
export function local(ms: number, timezone: string): string {
  return new Date(ms).toLocaleString("sv-SE", { timeZone: timezone }).slice(0, 16);
}
