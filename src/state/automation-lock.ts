import { hostname } from "node:os";
import { ConveyorError } from "../errors.js";
import { sleep } from "../retry.js";
import type { AutomationLock, LockRequest, StateStore } from "./types.js";

/** A holder that has not renewed its lock for this long is dead: several renewals missed, the age at which the interrupted-run sweep gives a run up too. */
export const LOCK_LEASE_MS = 60_000;
const RENEW_MS = 10_000;
const POLL_MS = 1_000;

export interface HeldLock {
  lock: AutomationLock;
  release(): Promise<void>;
}

export interface WaitOptions {
  leaseMs?: number;
  signal?: AbortSignal;
  pollMs?: number;
  /** Called on every look while another run holds the lock (a status line, a log record). */
  onWaiting?: (holder: AutomationLock) => void;
}

/**
 * One run of an automation at a time, whoever starts it: the daemon's
 * executor and `conveyor run` both take the automation's lock in the state
 * store before the run starts, renew it while it runs (so a holder that dies
 * loses it after the lease) and release it when the run ends. This takes it
 * now or answers with the lock of the run that holds it.
 */
export async function holdAutomation(store: StateStore, request: LockRequest, leaseMs = LOCK_LEASE_MS): Promise<HeldLock | { busy: AutomationLock }> {
  const lock = await store.lockAutomation(request, leaseMs);
  return lock.run_id === request.runId ? keep(store, lock) : { busy: lock };
}

/** Takes the automation's lock, waiting until the run that holds it ends (or the signal aborts). */
export async function waitForAutomation(store: StateStore, request: LockRequest, options: WaitOptions = {}): Promise<HeldLock> {
  for (;;) {
    const result = await holdAutomation(store, request, options.leaseMs);
    if (!("busy" in result)) return result;
    options.onWaiting?.(result.busy);
    try {
      await sleep(options.pollMs ?? POLL_MS, options.signal);
    } catch (err) {
      const reason: unknown = options.signal?.reason;
      if (reason instanceof ConveyorError) throw reason;
      throw new ConveyorError("canceled", `canceled while waiting for run ${result.busy.run_id} of automation ${request.automation} to end`, { cause: err });
    }
  }
}

function keep(store: StateStore, lock: AutomationLock): HeldLock {
  // A failed renewal is tried again on the next beat; only a lease that runs out loses the lock.
  const timer = setInterval(() => void store.renewLock(lock.automation, lock.run_id).catch(() => undefined), RENEW_MS);
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    lock,
    release: () => {
      clearInterval(timer);
      released ??= store.releaseLock(lock.automation, lock.run_id);
      return released;
    },
  };
}

/**
 * Who holds an automation's no-overlap lock: `cli <host>:<pid>` or
 * `daemon <host>:<pid>`. The host and process let a holder on this machine
 * that was killed be told apart from a slow one at once, without waiting for
 * its lease to run out.
 */
export function lockHolder(kind: "cli" | "daemon"): string {
  return `${kind} ${hostname()}:${process.pid}`;
}

/** False only when the holder is a process of this machine that no longer exists; anything else may be alive. */
export function holderMayBeAlive(holder: string): boolean {
  const match = /^(?:cli|daemon) (.+):(\d+)$/.exec(holder);
  if (!match || match[1] !== hostname()) return true;
  const pid = Number(match[2]);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The holder in words for a message: which program on which machine runs the automation. */
export function describeHolder(holder: string): string {
  const match = /^(cli|daemon) (.+):(\d+)$/.exec(holder);
  if (!match) return `daemon ${holder}`;
  return `${match[1] === "cli" ? "conveyor run" : "the daemon"} on ${match[2]} (pid ${match[3]})`;
}
