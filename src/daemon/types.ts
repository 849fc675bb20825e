import { createHash } from "node:crypto";
import type { Automation } from "../definition/index.js";
import type { RunParameters, RunSubject } from "../state/index.js";

/** What the scheduler needs to know about an automation; the daemon maps definitions to this. */
export interface SchedulableAutomation {
  key: string;
  account: string;
  /** 5-field cron: minute hour day-of-month month day-of-week; "" for none. */
  schedule: string;
  /** Without a schedule: fire every this many ms instead (the catch-up of an automation started by events). */
  everyMs?: number;
  /**
   * Scheduled runs are always diff runs, never the periodic full run: an
   * automation started by events catches up what no event brought, and must
   * not send again what an event run sent.
   */
  diffOnly?: boolean;
  /** IANA zone the cron fields are read in. */
  timezone: string;
  active: boolean;
  draft: boolean;
  /** Changes whenever the definition changes, so an edit is rescheduled at once. */
  version: string;
  /** Notification wanted for scheduled runs (the definition's default). */
  notify?: boolean;
  email?: string | null;
}

export interface RunRequest extends RunSubject, RunParameters {
  /** The cron fire time (ISO) a scheduled run stands for. */
  fireTime?: string;
  /** An undo (`POST /v3/automations/runs/{id}/undo`): the run it takes back, narrowed to some identifiers or fields. */
  undo?: { of: string; identifiers: string[]; fields: string[] };
}

/** The events an event run (`trigger: event`) takes at its start: their ids, and the orders they name. */
export interface RunEvents {
  ids: string[];
  orders: string[];
}

export type QueuedRun = RunRequest & { id: string };

/** The run pipeline. It must honour the signal: stop soon after it aborts and report `canceled`. */
export interface RunExecutor {
  /** `error`: what ended the run, as its record keeps it (masked), and `note`: why it had nothing to do, for the run_finished log line. */
  execute(request: QueuedRun, signal: AbortSignal): Promise<{ outcome: string; error?: { code: string; message: string } | null; note?: string }>;
}

/** Scheduler bookkeeping that must survive a restart so a missed fire time is caught up once. */
export interface SchedulerState {
  /** The latest fire time the scheduler has dealt with (ran or skipped), or the time it first saw the automation. */
  lastFireTime(key: string): Promise<string | null>;
  setLastFireTime(key: string, iso: string): Promise<void>;
  /**
   * The run of fire time `iso` never started (the daemon stopped while it waited):
   * when it is still the last one dealt with, step back before it so the next start catches it up.
   */
  reopenFireTime(key: string, iso: string): Promise<void>;
  /** Start of the last prod full run (`diff=false`) that ended without failing. */
  lastFullRun(key: string): Promise<string | null>;
  setLastFullRun(key: string, iso: string): Promise<void>;
  recordSkip(key: string, fireTime: string, reason: string): Promise<void>;
  /** Forget skip notes (and a cluster's fire claims) older than the date (run_retention). */
  pruneSkips(before: Date): Promise<number>;
}

export type TimerHandle = ReturnType<typeof setTimeout>;

/** Time source of the scheduler and the queue, injected so tests run on a fake clock. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** Resolves the globals at call time, so vitest's fake timers drive it too. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle),
};

/**
 * A fingerprint of the whole definition, so any edit (not only to the schedule)
 * counts as a change: the scheduler then reschedules the automation at once.
 * Key order is normalised, so re-reading the same file gives the same version.
 */
export function definitionVersion(definition: unknown): string {
  return createHash("sha256").update(stableJson(definition)).digest("hex").slice(0, 16);
}

/** CONVEYOR_EVENT_CATCHUP's default: how often an automation on events without a schedule catches up. */
export const DEFAULT_EVENT_CATCHUP_MS = 15 * 60_000;

/**
 * What the scheduler needs from a validated definition; `key` is the daemon's
 * name for the automation. One started by events also runs on its schedule,
 * or without one every `eventCatchUpMs`, to pick up orders whose event never
 * came (the seed, part 6: events may be missed).
 */
export function toSchedulable(
  key: string,
  account: string,
  automation: Pick<Automation, "active" | "draft" | "schedule" | "timezone" | "events">,
  version: string = definitionVersion(automation),
  eventCatchUpMs: number = DEFAULT_EVENT_CATCHUP_MS,
): SchedulableAutomation {
  const onEvents = (automation.events?.length ?? 0) > 0;
  const schedule = automation.schedule ?? "";
  return {
    key,
    account,
    schedule,
    ...(onEvents ? { diffOnly: true, ...(schedule.trim() === "" ? { everyMs: eventCatchUpMs } : {}) } : {}),
    timezone: automation.timezone || "UTC",
    active: automation.active,
    draft: automation.draft,
    version,
  };
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
