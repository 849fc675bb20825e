import { ConveyorError } from "../errors.js";
import { silentLogger, type Logger } from "../log.js";
import { newRunId } from "../pipeline/recorder.js";
import type { RunMode } from "../state/index.js";
import { Listeners } from "./listeners.js";
import type { JournalEntry, QueueJournal } from "./daemon-db-queue.js";
import { systemClock, type Clock, type QueuedRun, type RunExecutor, type RunRequest, type TimerHandle } from "./types.js";

/** setTimeout fires at once for delays past 2^31-1 ms (24.8 days); longer limits are held to that. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Why a run was aborted: asked for, over `max_run_time`, or the daemon shutting down. */
export type CancelReason = "canceled" | "max_run_time" | "shutdown";
export type SkipReason = "running" | "waiting";

export interface EnqueueResult {
  id: string;
  /** True while the run waits for its automation or for a free slot; false when it started at once. */
  queued: boolean;
  /** The request was folded into the run already waiting for this automation and mode. */
  existing?: boolean;
}

export interface RunInfo {
  id: string;
  automation: string;
  mode: RunMode;
  state: "waiting" | "running";
  enqueued: string;
  started: string | null;
}

export interface FinishedEvent {
  run: QueuedRun;
  outcome: string;
  /** False for a waiting run that was canceled before it started. */
  started: boolean;
  /** When the run started (ISO), null when it never did. */
  startedAt: string | null;
  reason: CancelReason | null;
  error: unknown;
  /** The error the run's record ends with, when the executor returned one. */
  failure: { code: string; message: string } | null;
  /** Why a run with outcome `nothing` had nothing to do. */
  note?: string;
  durationMs: number;
}

export interface QueueEvents {
  queued: QueuedRun;
  started: QueuedRun;
  finished: FinishedEvent;
  skipped: { run: RunRequest; reason: SkipReason };
}

export interface QueueOptions {
  executor: RunExecutor;
  concurrency: number;
  maxRunTimeMs: number;
  clock?: Clock;
  newId?: (now: Date) => string;
  logger?: Logger;
  /** Keeps accepted runs until they end, so they outlive the process (SQLite mode); without it the queue lives in memory. */
  journal?: QueueJournal;
}

export interface DrainResult {
  /** Runs that ended on their own within the grace period. */
  finished: number;
  /** Runs aborted during the drain: the grace period ran out, or a second signal canceled them. */
  canceled: number;
  /** Runs that still had not returned after being aborted and `settleMs` more. */
  stuck: string[];
  /** Waiting runs left in the journal, to run at the next start. */
  kept: number;
}

interface Entry {
  run: QueuedRun;
  enqueued: number;
  started: number | null;
  controller: AbortController | null;
  timer: TimerHandle | null;
  reason: CancelReason | null;
}

/**
 * Decides when a requested run starts: one run per automation at a time, one
 * waiting run per automation and mode, at most `concurrency` side by side, and
 * each run aborted after `max_run_time`. With a journal, a run is written down
 * before it is accepted and crossed out when it ends, and a stopping daemon
 * leaves its waiting runs there for the next start.
 */
export class RunQueue {
  private readonly waiting: Entry[] = [];
  private readonly running = new Map<string, Entry>();
  private readonly events: Listeners<QueueEvents>;
  private readonly clock: Clock;
  private readonly newId: (now: Date) => string;
  private readonly logger: Logger;
  private draining = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: QueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new ConveyorError("settings_invalid", `concurrency: ${options.concurrency} is not allowed; use a whole number of at least 1`);
    }
    this.clock = options.clock ?? systemClock;
    this.newId = options.newId ?? newRunId;
    const logger = options.logger ?? silentLogger;
    this.logger = logger;
    this.events = new Listeners<QueueEvents>((err, name) => logger.error({ err, event: name }, "a run queue listener failed"));
  }

  on<K extends keyof QueueEvents>(name: K, fn: (event: QueueEvents[K]) => void): () => void {
    return this.events.on(name, fn);
  }

  /**
   * Queue a manual, API or event run; a second request while one waits gets the waiting run's id.
   * A run with an id (handed over by the cluster's shared queue) keeps it.
   */
  enqueue(request: RunRequest & { id?: string }): EnqueueResult {
    if (this.draining) {
      throw new ConveyorError("canceled", `the daemon is shutting down; the run of ${request.automation} was not queued`, {
        retryable: true,
        hint: "send the request again once the daemon has restarted",
      });
    }
    // An undo joins only an undo of the same run: it is not the automation's run, and no run is that undo.
    const waiting = this.waiting.find((e) => e.run.automation === request.automation && e.run.mode === request.mode && e.run.undo?.of === request.undo?.of);
    if (waiting) return { id: waiting.run.id, queued: true, existing: true };
    const now = this.clock.now();
    const entry: Entry = { run: { ...request, id: request.id ?? this.newId(new Date(now)) }, enqueued: now, started: null, controller: null, timer: null, reason: null };
    this.options.journal?.add(entry.run, new Date(now).toISOString());
    this.waiting.push(entry);
    this.events.emit("queued", entry.run);
    this.pump();
    return { id: entry.run.id, queued: entry.started === null };
  }

  /** A schedule tick: skipped (not queued) when the automation is running or a run of the same mode waits. */
  offerTick(request: RunRequest): EnqueueResult | { skipped: SkipReason } {
    let reason: SkipReason | null = null;
    if (this.isRunning(request.automation)) reason = "running";
    else if (this.waiting.some((e) => e.run.automation === request.automation && e.run.mode === request.mode)) reason = "waiting";
    if (reason) {
      this.events.emit("skipped", { run: request, reason });
      return { skipped: reason };
    }
    return this.enqueue(request);
  }

  /**
   * Takes back the journal's runs at start, in their order and under their ids,
   * with the time they were first queued; the usual rules then decide when each starts.
   */
  restore(entries: readonly JournalEntry[]): void {
    for (const { run, enqueued } of entries) {
      if (this.running.has(run.id) || this.waiting.some((e) => e.run.id === run.id)) continue;
      this.waiting.push({ run, enqueued: Date.parse(enqueued), started: null, controller: null, timer: null, reason: null });
    }
    this.pump();
  }

  isRunning(automation: string): boolean {
    for (const e of this.running.values()) if (e.run.automation === automation) return true;
    return false;
  }

  /** Cancel a waiting run (it never starts) or abort a running one. False when the id is unknown. */
  cancel(id: string, reason: CancelReason = "canceled"): boolean {
    const index = this.waiting.findIndex((e) => e.run.id === id);
    if (index >= 0) {
      const [entry] = this.waiting.splice(index, 1);
      if (entry) this.dropWaiting(entry, reason);
      return true;
    }
    const entry = this.running.get(id);
    if (!entry) return false;
    this.abort(entry, reason);
    return true;
  }

  /** Abort everything at once: the second shutdown signal. Waiting runs stay in the journal when there is one. */
  cancelAll(reason: CancelReason = "shutdown"): void {
    if (!(reason === "shutdown" && this.options.journal)) for (const entry of this.waiting.splice(0)) this.dropWaiting(entry, reason);
    for (const entry of this.running.values()) this.abort(entry, reason);
  }

  /**
   * Stop starting runs, let running ones finish for `graceMs`, then abort them and
   * wait up to `settleMs` for them to return. Waiting runs stay in the journal for
   * the next start; without one they are canceled at once.
   */
  async drain(graceMs: number, settleMs = 30_000): Promise<DrainResult> {
    this.draining = true;
    const kept = this.options.journal ? this.waiting.length : 0;
    if (!this.options.journal) for (const entry of this.waiting.splice(0)) this.dropWaiting(entry, "shutdown");
    const result: DrainResult = { finished: 0, canceled: 0, stuck: [], kept };
    // Counted as they end, so a run aborted meanwhile (a second signal, max_run_time) is not called graceful.
    const stopCounting = this.events.on("finished", (e) => {
      if (!e.started) return;
      if (e.reason === null) result.finished++;
      else result.canceled++;
    });
    try {
      if (!(await this.idle(graceMs))) {
        for (const entry of this.running.values()) this.abort(entry, "shutdown");
        await this.idle(settleMs);
      }
    } finally {
      stopCounting();
    }
    const stuck = [...this.running.values()];
    result.canceled += stuck.length;
    result.stuck = stuck.map((e) => e.run.id);
    return result;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  depth(): { waiting: number; running: number } {
    return { waiting: this.waiting.length, running: this.running.size };
  }

  list(): RunInfo[] {
    const info = (e: Entry, state: RunInfo["state"]): RunInfo => ({
      id: e.run.id,
      automation: e.run.automation,
      mode: e.run.mode,
      state,
      enqueued: new Date(e.enqueued).toISOString(),
      started: e.started === null ? null : new Date(e.started).toISOString(),
    });
    return [...[...this.running.values()].map((e) => info(e, "running")), ...this.waiting.map((e) => info(e, "waiting"))];
  }

  /** True once nothing runs; false when `ms` passed first. */
  private idle(ms: number): Promise<boolean> {
    if (this.running.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (): void => {
        this.clock.clearTimer(timer);
        resolve(true);
      };
      const timer = this.clock.setTimer(() => {
        this.idleWaiters = this.idleWaiters.filter((w) => w !== done);
        resolve(false);
      }, Math.min(ms, MAX_TIMER_MS));
      this.idleWaiters.push(done);
    });
  }

  private pump(): void {
    while (!this.draining && this.running.size < this.options.concurrency) {
      const index = this.waiting.findIndex((e) => !this.isRunning(e.run.automation));
      if (index < 0) return;
      const [entry] = this.waiting.splice(index, 1);
      if (entry) this.start(entry);
    }
  }

  private start(entry: Entry): void {
    const controller = new AbortController();
    entry.controller = controller;
    entry.started = this.clock.now();
    entry.timer = this.clock.setTimer(() => this.abort(entry, "max_run_time"), Math.min(this.options.maxRunTimeMs, MAX_TIMER_MS));
    this.running.set(entry.run.id, entry);
    this.events.emit("started", entry.run);
    Promise.resolve()
      .then(() => this.options.executor.execute(entry.run, controller.signal))
      .then(
        (result) => this.finish(entry, result.outcome, null, result.error ?? null, result.note),
        (err: unknown) => this.finish(entry, controller.signal.aborted ? "canceled" : "failed", err, null),
      );
  }

  private abort(entry: Entry, reason: CancelReason): void {
    if (!entry.controller || entry.controller.signal.aborted) return;
    entry.reason = reason;
    const message =
      reason === "max_run_time"
        ? `the run passed max_run_time (${this.options.maxRunTimeMs} ms) and was canceled`
        : reason === "shutdown"
          ? "the daemon is shutting down; the run was canceled"
          : "the run was canceled on request";
    entry.controller.abort(new ConveyorError("canceled", message, { details: { reason } }));
  }

  private finish(entry: Entry, outcome: string, error: unknown, failure: FinishedEvent["failure"], note?: string): void {
    if (entry.timer) this.clock.clearTimer(entry.timer);
    this.running.delete(entry.run.id);
    this.forget(entry.run);
    const durationMs = this.clock.now() - (entry.started ?? entry.enqueued);
    const startedAt = new Date(entry.started ?? entry.enqueued).toISOString();
    this.events.emit("finished", { run: entry.run, outcome, started: true, startedAt, reason: entry.reason, error, failure, durationMs, ...(note ? { note } : {}) });
    if (this.running.size === 0) for (const waiter of this.idleWaiters.splice(0)) waiter();
    this.pump();
  }

  private dropWaiting(entry: Entry, reason: CancelReason): void {
    this.forget(entry.run);
    this.events.emit("finished", { run: entry.run, outcome: "canceled", started: false, startedAt: null, reason, error: null, failure: null, durationMs: 0 });
  }

  /** Crossed out only once the run has its final record, so a crash before that leaves it found at the next start. */
  private forget(run: QueuedRun): void {
    try {
      this.options.journal?.remove(run.id);
    } catch (err) {
      // Left in the journal, the run is only looked at again at the next start, which sees its finished record and drops it.
      this.logger.error({ err, run_id: run.id }, "the run could not be removed from the queue journal");
    }
  }
}
