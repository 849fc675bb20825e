import { Cron } from "croner";
import { describe, expect, it } from "vitest";
import { CronSchedule, instantOf, offsetAt, wallOf } from "../../src/daemon/cron-time.js";
import { ConveyorError } from "../../src/errors.js";
import { local } from "./harness.js";

const BERLIN = "Europe/Berlin";
const NEW_YORK = "America/New_York";

function series(pattern: string, timezone: string, from: string, count: number): string[] {
  const schedule = new CronSchedule(pattern, timezone);
  const out: string[] = [];
  let at: Date | null = new Date(from);
  for (let i = 0; i < count && at; i++) {
    at = schedule.next(at);
    if (at) out.push(local(at.getTime(), timezone));
  }
  return out;
}

function utc(pattern: string, from: string, count: number): string[] {
  const schedule = new CronSchedule(pattern, "UTC");
  const out: string[] = [];
  let at: Date | null = new Date(from);
  for (let i = 0; i < count && at; i++) {
    at = schedule.next(at);
    if (at) out.push(at.toISOString());
  }
  return out;
}

describe("wall-clock helpers", () => {
  it("reads offsets and wall times in a zone", () => {
    expect(offsetAt(Date.parse("2025-01-15T12:00:00Z"), BERLIN)).toBe(3600_000);
    expect(offsetAt(Date.parse("2025-07-15T12:00:00Z"), BERLIN)).toBe(7200_000);
    expect(new Date(wallOf(Date.parse("2025-07-15T12:00:00.250Z"), BERLIN)).toISOString()).toBe("2025-07-15T14:00:00.250Z");
  });

  it("maps a missing wall time to the end of the gap and a repeated one to its first occurrence", () => {
    expect(new Date(instantOf(Date.UTC(2025, 2, 30, 2, 30), BERLIN)).toISOString()).toBe("2025-03-30T01:00:00.000Z");
    expect(new Date(instantOf(Date.UTC(2025, 9, 26, 2, 30), BERLIN)).toISOString()).toBe("2025-10-26T00:30:00.000Z");
    expect(new Date(instantOf(Date.UTC(2025, 0, 10, 9, 0), NEW_YORK)).toISOString()).toBe("2025-01-10T14:00:00.000Z");
  });
});

describe("CronSchedule in UTC", () => {
  it("fires */5 every five minutes, strictly after the reference", () => {
    expect(utc("*/5 * * * *", "2025-01-01T00:00:00Z", 3)).toEqual(["2025-01-01T00:05:00.000Z", "2025-01-01T00:10:00.000Z", "2025-01-01T00:15:00.000Z"]);
    expect(utc("*/5 * * * *", "2025-01-01T00:04:59.999Z", 1)).toEqual(["2025-01-01T00:05:00.000Z"]);
    expect(utc("*/5 * * * *", "2025-01-01T00:05:00.500Z", 1)).toEqual(["2025-01-01T00:10:00.000Z"]);
  });

  it("fires 0 0 * * 0 on Sundays at midnight", () => {
    expect(utc("0 0 * * 0", "2025-01-01T00:00:00Z", 3)).toEqual(["2025-01-05T00:00:00.000Z", "2025-01-12T00:00:00.000Z", "2025-01-19T00:00:00.000Z"]);
  });

  it("reads day-of-week 7 as Sunday, as the definition's cron dialect allows", () => {
    expect(utc("0 0 * * 7", "2025-01-01T00:00:00Z", 2)).toEqual(["2025-01-05T00:00:00.000Z", "2025-01-12T00:00:00.000Z"]);
    expect(utc("0 0 * * 5-7", "2025-01-01T00:00:00Z", 3).map((d) => d.slice(0, 10))).toEqual(["2025-01-03", "2025-01-04", "2025-01-05"]);
  });

  it("combines day-of-month and day-of-week with OR, as cron does", () => {
    // The 1st of the month OR a Monday: Jan 6 and 13 are Mondays, Feb 1 is a Saturday.
    expect(utc("0 0 1 * 1", "2025-01-02T00:00:00Z", 5).map((d) => d.slice(0, 10))).toEqual(["2025-01-06", "2025-01-13", "2025-01-20", "2025-01-27", "2025-02-01"]);
  });

  it("finds the latest fire time at or before a moment", () => {
    const schedule = new CronSchedule("*/15 * * * *", "UTC");
    expect(schedule.previous(new Date("2025-01-01T10:44:59Z"))?.toISOString()).toBe("2025-01-01T10:30:00.000Z");
    expect(schedule.previous(new Date("2025-01-01T10:45:00Z"))?.toISOString()).toBe("2025-01-01T10:45:00.000Z");
  });
});

describe("CronSchedule across DST changes", () => {
  it("runs 30 2 * * * once at 03:00 on the Berlin spring-forward day", () => {
    expect(series("30 2 * * *", BERLIN, "2025-03-29T00:00:00Z", 3)).toEqual(["2025-03-29 02:30", "2025-03-30 03:00", "2025-03-31 02:30"]);
  });

  it("runs 30 2 * * * once on the Berlin fall-back day, at the first 02:30", () => {
    const schedule = new CronSchedule("30 2 * * *", BERLIN);
    const first = schedule.next(new Date("2025-10-25T12:00:00Z"));
    expect(first?.toISOString()).toBe("2025-10-26T00:30:00.000Z");
    expect(schedule.next(first ?? new Date(0))?.toISOString()).toBe("2025-10-27T01:30:00.000Z");
    // Asked from inside the repeated hour, the second 02:30 is not offered either.
    expect(schedule.next(new Date("2025-10-26T01:10:00Z"))?.toISOString()).toBe("2025-10-27T01:30:00.000Z");
    expect(schedule.previous(new Date("2025-10-26T01:45:00Z"))?.toISOString()).toBe("2025-10-26T00:30:00.000Z");
    // At 02:10 of the second pass the 02:30 that already ran (at its first pass) is still the latest.
    expect(schedule.previous(new Date("2025-10-26T01:10:00Z"))?.toISOString()).toBe("2025-10-26T00:30:00.000Z");
    expect(schedule.previous(new Date("2025-10-26T00:29:00Z"))?.toISOString()).toBe("2025-10-25T00:30:00.000Z");
  });

  it("applies the same rules to lists, ranges and steps", () => {
    expect(series("30 2,14 * * *", BERLIN, "2025-03-29T12:00:00Z", 3)).toEqual(["2025-03-29 14:30", "2025-03-30 03:00", "2025-03-30 14:30"]);
    expect(series("30 2,14 * * *", BERLIN, "2025-10-25T12:00:00Z", 3)).toEqual(["2025-10-25 14:30", "2025-10-26 02:30", "2025-10-26 14:30"]);
    expect(series("30 * * * *", BERLIN, "2025-03-30T00:00:00Z", 3)).toEqual(["2025-03-30 01:30", "2025-03-30 03:00", "2025-03-30 03:30"]);
    // Every wall time of the gap folds into the one run at 03:00, which is a fire time itself.
    expect(series("*/30 * * * *", BERLIN, "2025-03-30T00:00:00Z", 3)).toEqual(["2025-03-30 01:30", "2025-03-30 03:00", "2025-03-30 03:30"]);
    const fallBack = new CronSchedule("*/30 * * * *", BERLIN);
    const instants: string[] = [];
    let at: Date | null = new Date("2025-10-25T23:45:00Z");
    for (let i = 0; i < 4 && at; i++) {
      at = fallBack.next(at);
      if (at) instants.push(at.toISOString());
    }
    // 02:00 and 02:30 CEST run; their CET repeats (01:00Z, 01:30Z) do not.
    expect(instants).toEqual(["2025-10-26T00:00:00.000Z", "2025-10-26T00:30:00.000Z", "2025-10-26T02:00:00.000Z", "2025-10-26T02:30:00.000Z"]);
  });

  it("handles New York's changes at 02:00 the same way", () => {
    expect(series("30 2 * * *", NEW_YORK, "2025-03-08T12:00:00Z", 2)).toEqual(["2025-03-09 03:00", "2025-03-10 02:30"]);
    const schedule = new CronSchedule("30 1 * * *", NEW_YORK);
    const first = schedule.next(new Date("2025-11-02T00:00:00Z"));
    expect(first?.toISOString()).toBe("2025-11-02T05:30:00.000Z");
    expect(schedule.next(first ?? new Date(0))?.toISOString()).toBe("2025-11-03T06:30:00.000Z");
  });

  it("documents why croner's own timezone handling is not used: lists skip the gap and repeat in the overlap", () => {
    const native = new Cron("30 2,14 * * *", { timezone: BERLIN, mode: "5-part", paused: true });
    const spring = native.nextRuns(2, new Date("2025-03-29T12:00:00Z")).map((d) => d.toISOString());
    expect(spring).toEqual(["2025-03-29T13:30:00.000Z", "2025-03-30T12:30:00.000Z"]);
    const autumn = native.nextRuns(3, new Date("2025-10-25T13:00:00Z")).map((d) => d.toISOString());
    expect(autumn).toEqual(["2025-10-26T00:30:00.000Z", "2025-10-26T01:30:00.000Z", "2025-10-26T13:30:00.000Z"]);
    // For a single-value pattern croner follows the same rule as the spec.
    const fixed = new Cron("30 2 * * *", { timezone: BERLIN, mode: "5-part", paused: true });
    expect(fixed.nextRuns(2, new Date("2025-03-29T12:00:00Z")).map((d) => d.toISOString())).toEqual(["2025-03-30T01:00:00.000Z", "2025-03-31T00:30:00.000Z"]);
  });
});

describe("CronSchedule input errors", () => {
  it("names the schedule field and the allowed form", () => {
    const err = (() => {
      try {
        new CronSchedule("61 * * * *", "UTC");
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).code).toBe("definition_invalid");
    expect((err as ConveyorError).message).toMatch(/^schedule: "61 \* \* \* \*"/);
    expect(() => new CronSchedule("* * * * * *", "UTC")).toThrow(/5-field/);
    expect(() => new CronSchedule("0 * * * *", "Mars/Olympus")).toThrow(/timezone: "Mars\/Olympus" is not a known IANA zone/);
  });

  it("returns null for a pattern that never matches", () => {
    expect(new CronSchedule("0 0 30 2 *", "UTC").next(new Date("2025-01-01T00:00:00Z"))).toBeNull();
  });
});
