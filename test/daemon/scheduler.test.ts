import { afterEach, describe, expect, it, vi } from "vitest";
import { automation, local, rig, type Rig } from "./harness.js";

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

describe("Scheduler on a fake clock", () => {
  it("fires */5 in UTC at each fire time, as scheduled prod runs", async () => {
    const r = start("2025-01-01T00:00:30Z", { runMs: MIN });
    await r.scheduler.sync([automation("feed", "*/5 * * * *")]);
    expect(r.scheduler.nextFire("feed")?.toISOString()).toBe("2025-01-01T00:05:00.000Z");
    await vi.advanceTimersByTimeAsync(30 * MIN);
    const runs = r.executor.of("feed");
    expect(runs.map((x) => new Date(x.started).toISOString().slice(11, 16))).toEqual(["00:05", "00:10", "00:15", "00:20", "00:25", "00:30"]);
    expect(runs.every((x) => x.run.fireTime === new Date(x.started).toISOString())).toBe(true);
    expect(runs[0]?.run).toMatchObject({ mode: "prod", trigger: "schedule", account: "acct", force: false });
  });

  it("runs 30 2 * * * in Europe/Berlin once at 03:00 on the spring-forward day", async () => {
    const r = start("2025-03-28T12:00:00Z");
    await r.scheduler.sync([automation("nightly", "30 2 * * *", { timezone: "Europe/Berlin" })]);
    await vi.advanceTimersByTimeAsync(4 * 24 * HOUR);
    expect(r.executor.of("nightly").map((x) => local(x.started, "Europe/Berlin"))).toEqual([
      "2025-03-29 02:30",
      "2025-03-30 03:00",
      "2025-03-31 02:30",
      "2025-04-01 02:30",
    ]);
  });

  it("runs 30 2 * * * in Europe/Berlin once on the fall-back day", async () => {
    const r = start("2025-10-25T12:00:00Z");
    await r.scheduler.sync([automation("nightly", "30 2 * * *", { timezone: "Europe/Berlin" })]);
    await vi.advanceTimersByTimeAsync(3 * 24 * HOUR);
    expect(r.executor.of("nightly").map((x) => new Date(x.started).toISOString())).toEqual([
      "2025-10-26T00:30:00.000Z",
      "2025-10-27T01:30:00.000Z",
      "2025-10-28T01:30:00.000Z",
    ]);
  });

  it("fires 0 0 * * 0 weekly across waits longer than one timer", async () => {
    const r = start("2025-01-01T08:00:00Z");
    await r.scheduler.sync([automation("weekly", "0 0 * * 0")]);
    await vi.advanceTimersByTimeAsync(21 * 24 * HOUR);
    expect(r.executor.of("weekly").map((x) => new Date(x.started).toISOString().slice(0, 16))).toEqual([
      "2025-01-05T00:00",
      "2025-01-12T00:00",
      "2025-01-19T00:00",
    ]);
  });

  it("skips and records a tick that finds the automation still running", async () => {
    const r = start("2025-01-01T00:00:00Z", { runMs: 12 * MIN });
    await r.scheduler.sync([automation("slow", "*/5 * * * *")]);
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(r.executor.of("slow").map((x) => new Date(x.started).toISOString().slice(11, 16))).toEqual(["00:05", "00:20"]);
    expect(r.executor.overlapped).toBe(false);
    const skips = await r.state.skips("slow");
    expect(skips.map((s) => [s.fireTime.slice(11, 16), s.reason])).toEqual([
      ["00:30", "running"],
      ["00:25", "running"],
      ["00:15", "running"],
      ["00:10", "running"],
    ]);
  });

  it("skips a tick while a run of the automation waits for a free slot", async () => {
    const r = start("2025-01-01T00:00:00Z", { concurrency: 1, runMs: 20 * MIN });
    r.queue.enqueue({ automation: "other", account: "acct", mode: "prod", trigger: "manual", diff: true, force: false, notify: false, email: null });
    await r.scheduler.sync([automation("feed", "*/5 * * * *")]);
    await vi.advanceTimersByTimeAsync(10 * MIN);
    expect(r.queue.depth()).toEqual({ waiting: 1, running: 1 });
    expect((await r.state.skips("feed")).map((s) => s.reason)).toEqual(["waiting"]);
  });

  it("keeps to concurrency 2 with five automations due at once", async () => {
    const r = start("2025-01-01T00:00:00Z", { concurrency: 2, runMs: 3 * MIN });
    await r.scheduler.sync(["a", "b", "c", "d", "e"].map((k) => automation(k, "0 * * * *")));
    await vi.advanceTimersByTimeAsync(HOUR + 10 * MIN);
    expect(r.executor.runs).toHaveLength(5);
    expect(r.executor.maxConcurrent).toBe(2);
    expect(r.executor.runs.map((x) => (x.started - Date.parse("2025-01-01T01:00:00Z")) / MIN)).toEqual([0, 0, 3, 3, 6]);
  });

  it("cancels a scheduled run past max_run_time", async () => {
    const r = start("2025-01-01T00:00:00Z", { runMs: 5 * HOUR, maxRunTimeMs: 2 * HOUR });
    await r.scheduler.sync([automation("stuck", "0 * * * *")]);
    await vi.advanceTimersByTimeAsync(3 * HOUR + MIN);
    expect(r.finished[0]).toMatchObject({ outcome: "canceled", reason: "max_run_time", durationMs: 2 * HOUR });
    expect(new Date(r.executor.runs[1]?.started ?? 0).toISOString()).toBe("2025-01-01T03:00:00.000Z");
  });

  it("runs one catch-up run for fire times missed while down, then keeps the schedule", async () => {
    const first = start("2025-01-01T00:00:00Z", { runMs: MIN });
    await first.scheduler.sync([automation("feed", "*/15 * * * *")]);
    await vi.advanceTimersByTimeAsync(20 * MIN);
    expect(first.executor.runs).toHaveLength(1);
    await first.crash();
    // Down from 00:20 to 02:05: eight fire times (00:30 … 02:00) pass unseen.
    await vi.advanceTimersByTimeAsync(HOUR + 45 * MIN);
    const second = first.restart();
    rigs.push(second);
    await second.scheduler.sync([automation("feed", "*/15 * * * *")]);
    await vi.advanceTimersByTimeAsync(0);
    expect(second.executor.runs).toHaveLength(1);
    expect(second.executor.runs[0]?.run).toMatchObject({ trigger: "schedule", fireTime: "2025-01-01T02:00:00.000Z" });
    expect(new Date(second.executor.runs[0]?.started ?? 0).toISOString()).toBe("2025-01-01T02:05:00.000Z");
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(second.executor.runs.map((x) => x.run.fireTime?.slice(11, 16))).toEqual(["02:00", "02:15", "02:30"]);
    // A restart with nothing missed runs nothing extra.
    await second.crash();
    const third = second.restart();
    rigs.push(third);
    await third.scheduler.sync([automation("feed", "*/15 * * * *")]);
    await vi.advanceTimersByTimeAsync(MIN);
    expect(third.executor.runs).toHaveLength(0);
  });

  it("catches up at the next start a scheduled run that still waited when the daemon stopped", async () => {
    const first = start("2025-01-01T00:00:00Z", { concurrency: 1, runMs: 20 * MIN });
    first.queue.enqueue({ automation: "other", account: "acct", mode: "prod", trigger: "manual", diff: true, force: false, notify: false, email: null });
    await first.scheduler.sync([automation("feed", "0 * * * *")]);
    await vi.advanceTimersByTimeAsync(HOUR + MIN);
    expect(first.queue.list().map((r) => [r.automation, r.state])).toEqual([["feed", "running"]]);
    // The 02:00 run waits behind a manual run of another automation (01:50 to 02:10) when the daemon stops, as `shutdown` does it.
    await vi.advanceTimersByTimeAsync(49 * MIN);
    first.queue.enqueue({ automation: "other", account: "acct", mode: "prod", trigger: "manual", diff: true, force: false, notify: false, email: null });
    await vi.advanceTimersByTimeAsync(11 * MIN);
    expect(first.queue.list().map((r) => [r.automation, r.state])).toEqual([["other", "running"], ["feed", "waiting"]]);
    await first.scheduler.stop();
    const drained = first.queue.drain(0, 0);
    await vi.advanceTimersByTimeAsync(0);
    await drained;
    await first.crash();
    expect(first.finished.find((e) => e.run.automation === "feed" && !e.started)?.run.fireTime).toBe("2025-01-01T02:00:00.000Z");
    const second = first.restart();
    rigs.push(second);
    await second.scheduler.sync([automation("feed", "0 * * * *")]);
    await vi.advanceTimersByTimeAsync(0);
    expect(second.executor.runs.map((x) => x.run.fireTime)).toEqual(["2025-01-01T02:00:00.000Z"]);
  });

  it("folds fire times slept through (suspended machine, stepped clock) into one run for the latest", async () => {
    const r = start("2025-01-01T00:00:00Z", { runMs: MIN });
    await r.scheduler.sync([automation("feed", "*/5 * * * *")]);
    await vi.advanceTimersByTimeAsync(6 * MIN);
    vi.setSystemTime(new Date("2025-01-01T01:02:00Z"));
    await vi.advanceTimersByTimeAsync(MIN);
    expect(r.executor.runs.map((x) => x.run.fireTime?.slice(11, 16))).toEqual(["00:05", "01:00"]);
    await vi.advanceTimersByTimeAsync(5 * MIN);
    expect(r.executor.runs.map((x) => x.run.fireTime?.slice(11, 16))).toEqual(["00:05", "01:00", "01:05"]);
  });

  it("does not catch up an automation it has never seen before", async () => {
    const r = start("2025-01-01T00:07:00Z");
    await r.scheduler.sync([automation("new", "*/5 * * * *")]);
    await vi.advanceTimersByTimeAsync(MIN);
    expect(r.executor.runs).toHaveLength(0);
    expect(await r.state.lastFireTime("new")).toBe("2025-01-01T00:07:00.000Z");
  });

  it("does not run at once an automation reactivated while the daemon runs", async () => {
    const r = start("2025-01-01T00:00:00Z");
    await r.scheduler.sync([automation("feed", "0 * * * *")]);
    await vi.advanceTimersByTimeAsync(HOUR + MIN);
    await r.scheduler.sync([automation("feed", "0 * * * *", { active: false })]);
    await vi.advanceTimersByTimeAsync(3 * HOUR);
    await r.scheduler.sync([automation("feed", "0 * * * *", { version: "2" })]);
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(r.executor.runs.map((x) => x.run.fireTime?.slice(11, 16))).toEqual(["01:00"]);
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(r.executor.runs.map((x) => x.run.fireTime?.slice(11, 16))).toEqual(["01:00", "05:00"]);
  });

  it("reschedules a changed definition at once and drops inactive and draft ones", async () => {
    const r = start("2025-01-01T00:10:00Z");
    await r.scheduler.sync([automation("feed", "0 * * * *"), automation("other", "0 * * * *")]);
    expect(r.scheduler.nextFire("feed")?.toISOString()).toBe("2025-01-01T01:00:00.000Z");
    await vi.advanceTimersByTimeAsync(10 * MIN);
    await r.scheduler.sync([
      automation("feed", "*/5 * * * *", { version: "2" }),
      automation("other", "0 * * * *", { active: false }),
      automation("draft", "* * * * *", { draft: true }),
    ]);
    expect(r.scheduler.scheduled()).toEqual(["feed"]);
    expect(r.scheduler.nextFire("feed")?.toISOString()).toBe("2025-01-01T00:25:00.000Z");
    await vi.advanceTimersByTimeAsync(5 * MIN);
    expect(r.executor.runs.map((x) => [x.run.automation, new Date(x.started).toISOString().slice(11, 16)])).toEqual([["feed", "00:25"]]);
    await r.scheduler.sync([automation("feed", "*/5 * * * *", { version: "2", timezone: "Asia/Kolkata" })]);
    // Kolkata is UTC+05:30, so its */5 minutes are the same instants: the zone change is picked up, nothing is lost.
    expect(r.scheduler.nextFire("feed")?.toISOString()).toBe("2025-01-01T00:30:00.000Z");
    await r.scheduler.sync([automation("feed", "30 6 * * *", { version: "3", timezone: "Asia/Kolkata" })]);
    expect(r.scheduler.nextFire("feed")?.toISOString()).toBe("2025-01-01T01:00:00.000Z");
  });

  it("reports an invalid schedule without stopping the others", async () => {
    const r = start("2025-01-01T00:00:00Z");
    const report = await r.scheduler.sync([automation("bad", "99 * * * *"), automation("zone", "0 * * * *", { timezone: "Nowhere/City" }), automation("good", "0 * * * *")]);
    expect(report.scheduled).toEqual(["good"]);
    expect(report.invalid.map((i) => i.key)).toEqual(["bad", "zone"]);
    expect(report.invalid[0]?.message).toMatch(/^schedule: "99 \* \* \* \*"/);
  });

  it("sends a full run first and again after full_run_every, diff runs in between", async () => {
    const r = start("2025-01-01T00:00:00Z", { fullRunEveryMs: HOUR, runMs: MIN });
    await r.scheduler.sync([automation("feed", "*/15 * * * *")]);
    await vi.advanceTimersByTimeAsync(90 * MIN);
    expect(r.executor.runs.map((x) => `${x.run.fireTime?.slice(11, 16)} ${x.run.diff ? "diff" : "full"}`)).toEqual([
      "00:15 full",
      "00:30 diff",
      "00:45 diff",
      "01:00 diff",
      "01:15 full",
      "01:30 diff",
    ]);
    expect(await r.state.lastFullRun("feed")).toBe("2025-01-01T01:15:00.000Z");
  });

  it("repeats the full run while full runs fail", async () => {
    const r = start("2025-01-01T00:00:00Z", { fullRunEveryMs: HOUR, runMs: MIN });
    r.executor.outcomes.set("feed", "failed");
    await r.scheduler.sync([automation("feed", "*/15 * * * *")]);
    await vi.advanceTimersByTimeAsync(31 * MIN);
    r.executor.outcomes.set("feed", "success");
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(r.executor.runs.map((x) => `${x.run.diff ? "diff" : "full"} ${x.outcome}`)).toEqual(["full failed", "full failed", "full success", "diff success"]);
  });

  it("stops firing after stop()", async () => {
    const r = start("2025-01-01T00:00:00Z");
    await r.scheduler.sync([automation("feed", "*/5 * * * *")]);
    await vi.advanceTimersByTimeAsync(5 * MIN);
    await r.scheduler.stop();
    await vi.advanceTimersByTimeAsync(30 * MIN);
    expect(r.executor.runs).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});
