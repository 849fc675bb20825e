import { rm } from "node:fs/promises";
import path from "node:path";
import { runFolder } from "../pipeline/run.js";
import type { StateStore, RunRecord } from "../state/index.js";
import type { JournalEntry, QueueJournal } from "./daemon-db-queue.js";
import { systemClock, type Clock, type TimerHandle } from "./types.js";

export type ShutdownSignal = "SIGTERM" | "SIGINT";

export interface SignalTarget {
  on(event: ShutdownSignal, listener: (signal: ShutdownSignal) => void): unknown;
  off(event: ShutdownSignal, listener: (signal: ShutdownSignal) => void): unknown;
}

export interface SignalHandlers {
  /** First SIGTERM/SIGINT: stop scheduling, let running runs finish within the grace period. */
  onFirst: (signal: ShutdownSignal) => void;
  /** Any later signal: cancel the runs at once. */
  onSecond: (signal: ShutdownSignal) => void;
  signals?: readonly ShutdownSignal[];
  /** `process` unless a test passes its own emitter. */
  target?: SignalTarget;
}

/**
 * Installs the shutdown handlers. Installing any listener also replaces Node's
 * default of dying on the signal, which is what lets runs finish. Returns a
 * function that removes them again.
 */
export function installSignalHandlers(handlers: SignalHandlers): () => void {
  const target: SignalTarget = handlers.target ?? process;
  const signals = handlers.signals ?? ["SIGTERM", "SIGINT"];
  let received = 0;
  const listener = (signal: ShutdownSignal): void => {
    received++;
    if (received === 1) handlers.onFirst(signal);
    else handlers.onSecond(signal);
  };
  for (const signal of signals) target.on(signal, listener);
  return () => {
    for (const signal of signals) target.off(signal, listener);
  };
}

/**
 * Marks runs left open by a crashed worker as failed ("interrupted"). A run
 * whose heartbeat is newer than `staleBefore` may belong to a live process (a
 * CLI run next to the daemon), so the daemon passes a time a few heartbeats
 * back and sweeps again later (`startInterruptSweep`).
 */
export async function recoverInterrupted(store: Pick<StateStore, "markInterrupted">, staleBefore: Date): Promise<RunRecord[]> {
  return store.markInterrupted(staleBefore);
}

export interface QueueRecovery {
  /** Runs marked failed (interrupted): the journal's runs left open, and any whose heartbeat is stale. */
  interrupted: RunRecord[];
  /** The journal's runs that never started, to queue again in this order. */
  requeue: JournalEntry[];
  /** Ids of journal rows that no longer parse, removed from the journal. */
  unreadable: string[];
}

/**
 * A SQLite daemon's start, before `/readyz` and before any run starts. A run of
 * the journal that has a record was started by the previous daemon of this data
 * folder, which is gone: left open, it is marked interrupted at once, whatever
 * its heartbeat. An open run the journal does not know is not a daemon's (a CLI
 * run next to it, maybe alive) and keeps the heartbeat rule. A journal run
 * without a record never started and is handed back to be queued again.
 */
export async function recoverQueue(store: Pick<StateStore, "getRun" | "markInterrupted">, journal: QueueJournal, staleBefore: Date): Promise<QueueRecovery> {
  const { entries, unreadable } = journal.list();
  for (const id of unreadable) journal.remove(id);
  const requeue: JournalEntry[] = [];
  const started: string[] = [];
  for (const entry of entries) {
    if (await store.getRun(entry.run.id)) started.push(entry.run.id);
    else requeue.push(entry);
  }
  const interrupted = await store.markInterrupted(staleBefore, started);
  // After the marking: a crash in between finds the records finished at the next start and drops the rows then.
  for (const id of started) journal.remove(id);
  return { interrupted, requeue, unreadable };
}

export interface SweepOptions {
  /** A run whose heartbeat is older than this is taken for dead (the recorder beats every 10 s). */
  staleMs?: number;
  everyMs?: number;
  clock?: Clock;
  onRecovered?: (runs: RunRecord[]) => void;
  onError?: (err: unknown) => void;
}

/** Sweeps for interrupted runs now and every `everyMs`, so a run whose heartbeat was fresh at start is caught later. Returns stop. */
export function startInterruptSweep(store: Pick<StateStore, "markInterrupted">, options: SweepOptions = {}): () => void {
  const clock = options.clock ?? systemClock;
  const staleMs = options.staleMs ?? 60_000;
  const everyMs = options.everyMs ?? 60_000;
  let timer: TimerHandle | null = null;
  let stopped = false;
  const sweep = async (): Promise<void> => {
    try {
      const runs = await recoverInterrupted(store, new Date(clock.now() - staleMs));
      if (runs.length > 0) options.onRecovered?.(runs);
    } catch (err) {
      options.onError?.(err);
    }
    if (!stopped) timer = clock.setTimer(() => void sweep(), everyMs);
  };
  void sweep();
  return () => {
    stopped = true;
    if (timer) clock.clearTimer(timer);
  };
}

/**
 * Removes the work folders of runs marked interrupted: a run killed mid-apply
 * left its downloads and bulk files there, with the values it was sending,
 * secrets included, and no run reads them again (a re-run plans anew). The
 * debug files beside them stay. A run of another daemon has no folder here.
 */
export async function removeWorkFolders(dataDir: string, runs: readonly RunRecord[]): Promise<void> {
  for (const run of runs) await rm(path.join(runFolder(dataDir, run.id), "work"), { recursive: true, force: true });
}
