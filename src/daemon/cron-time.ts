import { Cron } from "croner";
import { ConveyorError } from "../errors.js";

/*
 * Fire times under the spec's DST rules: a local time that does not exist runs
 * once at the next valid minute, a local time that occurs twice runs once (at
 * its first occurrence). croner 11 does that only for "fixed-time" patterns
 * (one minute and one hour value); a list such as `30 2,14 * * *` is skipped in
 * the gap and runs twice in the repeated hour. So croner evaluates the pattern
 * on wall-clock time (in UTC, which has no DST), and this module maps each
 * matching wall time to an instant itself. Wall times are encoded as the epoch
 * milliseconds of the same fields read as UTC.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Larger than any DST shift ever used (2 h), so a back-off window always covers a repeated stretch. */
const LOOKBACK = 6 * HOUR;
/** A pattern that matches so rarely (or never) that the search gives up instead of looping. */
const MAX_STEPS = 10_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** The wall-clock time of `instant` in `timezone`, encoded as UTC epoch ms. */
export function wallOf(instant: number, timezone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatter(timezone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") fields[part.type] = Number(part.value);
  }
  const ms = ((instant % 1000) + 1000) % 1000;
  const f = (name: string): number => fields[name] ?? 0;
  return Date.UTC(f("year"), f("month") - 1, f("day"), f("hour"), f("minute"), f("second")) + ms;
}

/** UTC offset of `timezone` at `instant`, in ms (Berlin in summer: +2 h). */
export function offsetAt(instant: number, timezone: string): number {
  return wallOf(instant, timezone) - instant;
}

/**
 * The instant a wall time stands for under the spec's rules: its only
 * occurrence, its first occurrence when the clocks fell back over it, or the
 * first instant after the gap when the clocks jumped over it.
 */
export function instantOf(wall: number, timezone: string): number {
  const offsets = new Set([offsetAt(wall - DAY, timezone), offsetAt(wall, timezone), offsetAt(wall + DAY, timezone)]);
  const valid = [...offsets].map((o) => wall - o).filter((t) => wallOf(t, timezone) === wall);
  if (valid.length > 0) return Math.min(...valid);
  const before = offsetAt(wall - DAY, timezone);
  const after = offsetAt(wall + DAY, timezone);
  // Inside a gap: the transition lies between the two readings of the wall time; find its minute.
  let lo = Math.floor((wall - Math.max(before, after)) / MINUTE);
  let hi = Math.ceil((wall - Math.min(before, after)) / MINUTE);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (wallOf(mid * MINUTE, timezone) > wall) hi = mid;
    else lo = mid + 1;
  }
  return lo * MINUTE;
}

/** Throws a ConveyorError naming the problem when the zone is not an IANA zone this runtime knows. */
export function checkZone(timezone: string): void {
  try {
    formatter(timezone);
  } catch (err) {
    throw new ConveyorError("definition_invalid", `timezone: "${timezone}" is not a known IANA zone`, {
      cause: err,
      hint: "use a zone such as UTC, Europe/Berlin or America/New_York",
    });
  }
}

/** One automation's cron pattern in its zone: next and previous fire instants. */
export class CronSchedule {
  private readonly cron: Cron;

  constructor(
    readonly pattern: string,
    readonly timezone: string,
  ) {
    checkZone(timezone);
    try {
      this.cron = new Cron(pattern, { timezone: "UTC", mode: "5-part", paused: true });
    } catch (err) {
      throw new ConveyorError("definition_invalid", `schedule: "${pattern}" is not a valid 5-field cron pattern: ${(err as Error).message}`, {
        cause: err,
        hint: "minute hour day-of-month month day-of-week, e.g. */15 * * * * or 30 2 * * 1-5",
      });
    }
  }

  /** The first fire instant strictly after `after`, or null when the pattern never matches again. */
  next(after: Date): Date | null {
    const a = after.getTime();
    // Walls up to the wall of `after` all map to instants at or before it; in a repeated hour the
    // walls just above it map to their (past) first occurrence, which the loop steps over.
    let wall = new Date(wallOf(a, this.timezone));
    for (let i = 0; i < MAX_STEPS; i++) {
      const w = this.cron.nextRun(wall);
      if (!w) return null;
      const t = instantOf(w.getTime(), this.timezone);
      if (t > a) return new Date(t);
      wall = w;
    }
    return null;
  }

  /** The latest fire instant at or before `at`, or null when there is none. */
  previous(at: Date): Date | null {
    const b = at.getTime();
    // Inside a repeated hour, walls up to an hour above the wall of `at` already fired at their first
    // occurrence, so the search starts above them. croner's previousRuns excludes its reference: +1 s.
    const back = Math.max(0, offsetAt(b - LOOKBACK, this.timezone) - offsetAt(b, this.timezone));
    let wall = new Date(wallOf(b, this.timezone) + back + 1000);
    for (let i = 0; i < MAX_STEPS; i++) {
      const [w] = this.cron.previousRuns(1, wall);
      if (!w) return null;
      const t = instantOf(w.getTime(), this.timezone);
      if (t <= b) return new Date(t);
      wall = w;
    }
    return null;
  }
}
