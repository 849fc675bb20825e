import { afterEach, describe, expect, it, vi } from "vitest";
import { IntervalSchedule, intervalOffset } from "../../src/daemon/interval-time.js";
import { automation, rig, type Rig } from "./harness.js";

/** The catch-up of automations started by events (issue #30): an interval without a schedule, diff runs only. */

const MIN = 60_000;
const HOUR = 60 * MIN;
let rigs: Rig[] = [];

function start(now: string, options: Parameters<typeof rig>[0] = {}): Rig {
  vi.useFakeTimers({ now: new Date(now) });
  const r = rig(options);
  rigs.push(r);
  return r;
}

afterEach(async () => {
  for (const r of rigs) await r.cleanup();
  rigs = [];
  vi.useRealTimers();
});

describe("IntervalSchedule", () => {
  it("fires on a grid from the epoch, shifted by the offset", () => {
    const s = new IntervalSchedule(15 * MIN, 2 * MIN);
    expect(s.next(new Date("2025-01-01T00:00:00Z")).toISOString()).toBe("2025-01-01T00:02:00.000Z");
    expect(s.next(new Date("2025-01-01T00:02:00Z")).toISOString()).toBe("2025-01-01T00:17:00.000Z");
    expect(s.previous(new Date("2025-01-01T00:16:59Z")).toISOString()).toBe("2025-01-01T00:02:00.000Z");
    expect(s.previous(new Date("2025-01-01T00:17:00Z")).toISOString()).toBe("2025-01-01T00:17:00.000Z");
  });

  it("refuses an interval under a second", () => {
    expect(() => new IntervalSchedule(10)).toThrow(/CONVEYOR_EVENT_CATCHUP/);
  });

  it("gives each key a stable offset within the interval", () => {
    const a = intervalOffset("12", 15 * MIN);
    expect(a).toBe(intervalOffset("12", 15 * MIN));
    expect(a).toBeGreaterThanOrEqual(0);
    expect(a).toBeLessThan(15 * MIN);
  });
});

describe("Scheduler: catch-up of an automation on events", () => {
  it("runs every interval without a schedule, every run a diff run", async () => {
    const r = start("2025-01-01T00:00:00Z", { fullRunEveryMs: HOUR, runMs: MIN });
    await r.scheduler.sync([automation("events", "", { everyMs: 15 * MIN, diffOnly: true })]);
    await vi.advanceTimersByTimeAsync(2 * HOUR);
    const runs = r.executor.of("events");
    expect(runs).toHaveLength(8);
    expect(runs.every((x) => x.run.diff && x.run.trigger === "schedule")).toBe(true);
    const at = runs.map((x) => new Date(x.started).getTime());
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
    expect(new Set(gaps)).toEqual(new Set([15 * MIN]));
  });

  it("on a schedule, never makes the periodic full run", async () => {
    const r = start("2025-01-01T00:00:00Z", { fullRunEveryMs: HOUR, runMs: MIN });
    await r.scheduler.sync([automation("events", "*/30 * * * *", { diffOnly: true })]);
    await vi.advanceTimersByTimeAsync(3 * HOUR);
    expect(r.executor.of("events").map((x) => x.run.diff)).toEqual([true, true, true, true, true, true]);
  });

  it("leaves an automation with neither schedule nor interval unscheduled", async () => {
    const r = start("2025-01-01T00:00:00Z");
    const report = await r.scheduler.sync([automation("none", "")]);
    expect(report.scheduled).toEqual([]);
  });
});
