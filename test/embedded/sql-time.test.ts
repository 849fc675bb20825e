import { describe, expect, it } from "vitest";
import { sqlTime, sqlTimeAt } from "../../src/embedded/db.js";

/** sqlTimeAt formats once a second: whatever order the clock readings come in, each is its own second's text. */
describe("embedded service: row timestamps", () => {
  it("gives sqlTime's text for every reading, within a second, across seconds and when a test clock goes back", () => {
    const base = Date.UTC(2026, 10, 27, 23, 59, 58, 0);
    const readings = [base, base + 1, base + 999, base + 1000, base + 1500, base + 2000, base + 999, base - 1, base + 86_400_000, 0, 999, 1000];
    for (const ms of readings) expect(sqlTimeAt(ms)).toBe(sqlTime(new Date(ms)));
    expect(sqlTimeAt(base + 2000)).toBe("2026-11-28 00:00:00");
  });
});
