import type { StateStore, RunRecord } from "../state/index.js";
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
