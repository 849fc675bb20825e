import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { describeHolder, holdAutomation, isPostgresUrl, lockHolder, LOCK_LEASE_MS, waitForAutomation, type HeldLock, type StateStore } from "../state/index.js";

/** How often a waiting run says it still waits, so a terminal does not look hung. */
const STILL_WAITING_MS = 30_000;

export interface CliLockOptions {
  /** The automation's key (its id when stored) and what the user typed, for the hint. */
  key: string;
  arg: string;
  runId: string;
  wait: boolean;
  signal: AbortSignal;
  /** Where the waiting status goes (standard error). */
  say: (line: string) => void;
  pollMs?: number;
}

/**
 * `conveyor run` takes the automation's no-overlap lock, the one the daemon's
 * runs take: by default a busy automation refuses the run with the running
 * run's id; with `--wait` the run waits for it, saying so, then starts.
 */
export async function lockForCli(store: StateStore, settings: Pick<Settings, "databaseUrl" | "runLeaseMs">, options: CliLockOptions): Promise<HeldLock> {
  // With PostgreSQL the lock is the cluster's run lock, whose lease is the cluster's setting.
  const leaseMs = settings.databaseUrl && isPostgresUrl(settings.databaseUrl) ? settings.runLeaseMs : LOCK_LEASE_MS;
  const request = { automation: options.key, runId: options.runId, holder: lockHolder("cli") };
  if (!options.wait) {
    const result = await holdAutomation(store, request, leaseMs);
    if (!("busy" in result)) return result;
    const lock = result.busy;
    throw new ConveyorError("automation_busy", `automation ${options.key} is running: run ${lock.run_id}, started ${lock.started} by ${describeHolder(lock.holder)}; a second run would overlap it`, {
      hint: `wait for it with \`conveyor run ${options.arg} --wait\`, or follow it with \`conveyor runs ${options.key}\``,
      details: { automation: options.key, running_run: lock.run_id },
    });
  }
  let shown = "";
  let lastSaid = 0;
  const since = Date.now();
  return waitForAutomation(store, request, {
    leaseMs,
    signal: options.signal,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    onWaiting: (lock) => {
      const now = Date.now();
      if (lock.run_id !== shown) {
        shown = lock.run_id;
        lastSaid = now;
        options.say(`waiting: automation ${options.key} is running (run ${lock.run_id}, started ${lock.started} by ${describeHolder(lock.holder)}); this run starts when it ends`);
      } else if (now - lastSaid >= STILL_WAITING_MS) {
        lastSaid = now;
        options.say(`still waiting for run ${lock.run_id} (${Math.round((now - since) / 1000)}s)`);
      }
    },
  });
}
