import { createHash } from "node:crypto";
import { ConveyorError } from "../errors.js";

/**
 * Fire times every `everyMs`, for an automation started by events that has no
 * `schedule`: its catch-up runs (CONVEYOR_EVENT_CATCHUP). The grid is counted
 * from the epoch, so a restart keeps the same fire times and a missed one is
 * caught up like a cron tick; `offsetMs` shifts it per automation, so the
 * catch-up runs of many automations do not all read the service at once.
 */
export class IntervalSchedule {
  constructor(
    readonly everyMs: number,
    readonly offsetMs = 0,
  ) {
    if (!Number.isInteger(everyMs) || everyMs < 1000) {
      throw new ConveyorError("settings_invalid", `a catch-up interval of ${everyMs} ms is too short: CONVEYOR_EVENT_CATCHUP must be 1s or more`, { hint: "e.g. CONVEYOR_EVENT_CATCHUP=15m" });
    }
  }

  /** The first fire instant strictly after `after`. */
  next(after: Date): Date {
    return new Date(this.slot(after.getTime()) + this.everyMs);
  }

  /** The latest fire instant at or before `at`. */
  previous(at: Date): Date {
    return new Date(this.slot(at.getTime()));
  }

  private slot(ms: number): number {
    const offset = this.offsetMs % this.everyMs;
    return Math.floor((ms - offset) / this.everyMs) * this.everyMs + offset;
  }
}

/** A stable shift in [0, everyMs) derived from the automation's key. */
export function intervalOffset(key: string, everyMs: number): number {
  return createHash("sha256").update(key).digest().readUInt32BE(0) % everyMs;
}
