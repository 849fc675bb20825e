import { describe, expect, it } from "vitest";
import {
  compileSearch,
  matchesSearch,
  parseSearch,
  readDate,
  readRelative,
  resolveRelative,
  type SearchRecord,
} from "../../src/search/index.js";

/** Every relative date below counts from this moment. */
const NOW = new Date("2026-11-15T12:00:00Z");

type Row = [expression: string, record: SearchRecord, expected: boolean];

function table(rows: Row[]): void {
  it.each(rows)("%s on %j → %s", (expression, record, expected) => {
    expect(matchesSearch(parseSearch(expression), record, { now: NOW })).toBe(expected);
    expect(compileSearch(expression, { now: () => NOW })(record)).toBe(expected);
  });
}

describe("absolute dates compare by time (UTC) when the field reads as a date", () => {
  table([
    ["date:>2026-11-01", { date: "2026-11-02" }, true],
    ["date:>2026-11-01", { date: "2026-10-31" }, false],
    // a date without a time stands for its whole day
    ["date:>2026-11-01", { date: "2026-11-01 23:59:59" }, false],
    ["date:>=2026-11-01", { date: "2026-11-01 00:00:00" }, true],
    ["date:<2026-11-01", { date: "2026-10-31 23:59:59" }, true],
    ["date:<2026-11-01", { date: "2026-11-01 00:00:00" }, false],
    ["date:<=2026-11-01", { date: "2026-11-01 23:59:59" }, true],
    ["date:<=2026-11-01", { date: "2026-11-02 00:00:00" }, false],
    ["date:=2026-11-01", { date: "2026-11-01 08:00:00" }, true],
    ["date:=2026-11-01", { date: "2026-11-02T00:00:00Z" }, false],
    ["date:-=2026-11-01", { date: "2026-11-01T13:00:00Z" }, false],
    // a time makes it an instant
    ['date:>"2026-11-01 08:00:00"', { date: "2026-11-01 08:00:01" }, true],
    ['date:>"2026-11-01 08:00:00"', { date: "2026-11-01 08:00:00" }, false],
    ['date:="2026-11-01 08:00:00"', { date: "2026-11-01T08:00:00Z" }, true],
    ['date:>="2026-11-01 08:00"', { date: "2026-11-01T08:00:00.000Z" }, true],
    // ISO with T, Z and offsets; the field side too
    ["date:>2026-11-01T08:00:00Z", { date: "2026-11-01T09:30:00+01:00" }, true],
    ["date:>2026-11-01T08:00:00Z", { date: "2026-11-01T09:00:00+01:00" }, false],
    ["date:<2026-11-01T08:00:00+02:00", { date: "2026-11-01T05:59:59Z" }, true],
    ["date:=2026-11-01T06:00:00Z", { date: "2026-11-01T08:00:00+0200" }, true],
    ["date:>2026-11-01", { date: new Date("2026-11-03T00:00:00Z") }, true],
    // a field that does not read as a date: orderings fail, equality falls back to text
    ["date:>2026-11-01", { date: "soon" }, false],
    ["date:<2026-11-01", {}, false],
    ["date:=2026-11-01", { date: "2026-11-01" }, true],
    ["date:=2026-11-01", { date: "Nov 1 2026" }, false],
    ["date:!=2026-11-01", {}, true],
    // an impossible date is text, not a date: it orders as text
    ["date:=2026-02-30", { date: "2026-02-30" }, true],
    ["date:>2026-02-30", { date: "2026-03-01" }, true],
    ["date:>2026-02-30", { date: "2026-02-28" }, false],
  ]);
});

describe("relative dates in quotes, with a fixed now", () => {
  table([
    ['dateupdatedutc:>"-1 day"', { dateupdatedutc: "2026-11-14 12:00:01" }, true],
    ['dateupdatedutc:>"-1 day"', { dateupdatedutc: "2026-11-14 11:59:59" }, false],
    ['dateupdatedutc:<"-1 day"', { dateupdatedutc: "2026-11-14 11:59:59" }, true],
    ['dateupdatedutc:>"-2 hours"', { dateupdatedutc: "2026-11-15T10:30:00Z" }, true],
    ['dateupdatedutc:>"-2 hours"', { dateupdatedutc: "2026-11-15T09:30:00Z" }, false],
    ['dateupdatedutc:>"-1 hour"', { dateupdatedutc: "2026-11-15T11:30:00Z" }, true],
    ['dateupdatedutc:>"-30 minutes"', { dateupdatedutc: "2026-11-15T11:29:00Z" }, false],
    ['dateupdatedutc:>"-1 minute"', { dateupdatedutc: "2026-11-15T11:59:30Z" }, true],
    ['date:>"-1 week"', { date: "2026-11-08T12:00:01Z" }, true],
    ['date:>"-2 weeks"', { date: "2026-11-01" }, false],
    ['date:>"-1 month"', { date: "2026-10-15T12:00:01Z" }, true],
    ['date:>"-1 month"', { date: "2026-10-15T11:59:59Z" }, false],
    ['date:>"-1 year"', { date: "2025-11-15T12:00:01Z" }, true],
    ['date:>"-3 years"', { date: "2023-11-15T11:00:00Z" }, false],
    ['date:<"+1 day"', { date: "2026-11-16T11:00:00Z" }, true],
    ['date:<"1 day"', { date: "2026-11-16T13:00:00Z" }, false],
    ['date:>"now"', { date: "2026-11-15T12:00:01Z" }, true],
    ['date:<"now"', { date: "2026-11-15T12:00:01Z" }, false],
    ["date:<now", { date: "2026-11-15T11:00:00Z" }, true],
    // today is the whole UTC day
    ['date:="today"', { date: "2026-11-15 00:00:00" }, true],
    ['date:="today"', { date: "2026-11-15 23:59:59" }, true],
    ['date:="today"', { date: "2026-11-14 23:59:59" }, false],
    ['date:>="today"', { date: "2026-11-15 00:00:00" }, true],
    ['date:<"today"', { date: "2026-11-14 23:59:59" }, true],
    ['date:>"today"', { date: "2026-11-15 23:00:00" }, false],
    ['date:>"today"', { date: "2026-11-16" }, true],
    ['date:="yesterday"', { date: "2026-11-14 10:00:00" }, true],
    ['date:>"3 days ago"', { date: "2026-11-12T12:00:01Z" }, true],
    // units are singular or plural, any case
    ['date:>"-1 DAYS"', { date: "2026-11-14 12:00:01" }, true],
    // a field that is not a date does not hold against a relative date
    ['date:>"-1 day"', { date: "" }, false],
    ['date:>"-1 day"', {}, false],
    // "now" on a text field is just text
    ["mode:=now", { mode: "NOW" }, true],
  ]);

  it("re-reads the clock per record when compiled, and only when needed", () => {
    let calls = 0;
    let now = new Date("2026-11-15T12:00:00Z");
    const clock = (): Date => {
      calls += 1;
      return now;
    };
    const recent = compileSearch('date:>"-1 day"', { now: clock });
    const record = { date: "2026-11-15T00:00:00Z" };
    expect(recent(record)).toBe(true);
    now = new Date("2026-11-17T00:00:00Z");
    expect(recent(record)).toBe(false);
    expect(calls).toBe(2);
    const fixed = compileSearch("date:>2026-11-01 brand:=x", { now: clock });
    fixed({ date: "2026-11-02", brand: "x" });
    expect(calls).toBe(2);
  });
});

describe("date and relative readers", () => {
  it.each([
    ["2026-11-01", Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 2) - 1],
    ["2026-11-01 08:00:00", Date.UTC(2026, 10, 1, 8), Date.UTC(2026, 10, 1, 8)],
    ["2026-11-01 08:00", Date.UTC(2026, 10, 1, 8), Date.UTC(2026, 10, 1, 8)],
    ["2026-11-01T08:00:00.250Z", Date.UTC(2026, 10, 1, 8, 0, 0, 250), Date.UTC(2026, 10, 1, 8, 0, 0, 250)],
    ["2026-11-01T08:00:00-05:00", Date.UTC(2026, 10, 1, 13), Date.UTC(2026, 10, 1, 13)],
    ["2026-11-01T08:00:00+02", Date.UTC(2026, 10, 1, 6), Date.UTC(2026, 10, 1, 6)],
    ["2024-02-29", Date.UTC(2024, 1, 29), Date.UTC(2024, 2, 1) - 1],
  ])("reads %s", (text, first, last) => {
    expect(readDate(text)).toEqual({ first, last });
  });

  it.each(["2026-13-01", "2025-02-29", "2026-11-01 24:00", "2026-11-1", "20261101", "1e3", "12", "2026-11-01x", ""])(
    "does not read %j as a date",
    (text) => expect(readDate(text)).toBeNull(),
  );

  it.each(["-1 day", "+2 hours", "3 weeks ago", "now", "today", "yesterday", "tomorrow", "-5 mins", "1 year"])(
    "reads %j as relative",
    (text) => expect(readRelative(text)).not.toBeNull(),
  );

  it.each(["-1 fortnight", "day", "-1", "+1 day ago", "last week", ""])("does not read %j as relative", (text) => {
    expect(readRelative(text)).toBeNull();
  });

  it("clamps month arithmetic to the end of the month", () => {
    const now = Date.UTC(2026, 2, 31, 10);
    const rel = readRelative("-1 month");
    expect(rel).not.toBeNull();
    if (rel) expect(resolveRelative(rel, now).first).toBe(Date.UTC(2026, 1, 28, 10));
    const leap = readRelative("-2 years");
    if (leap) expect(resolveRelative(leap, Date.UTC(2026, 1, 28)).first).toBe(Date.UTC(2024, 1, 28));
  });
});
