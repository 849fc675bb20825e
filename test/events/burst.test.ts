import { describe, expect, it } from "vitest";
import { percentile, runBurst } from "./burst-driver.js";

/**
 * The second Must show, sized for CI on two cores: 300 orders at 100
 * a second, placed one by one (`npm run bench:events` runs the full 1,000).
 * Every order reaches the partner once, in far fewer runs than orders. The
 * latency is printed, not held to a target here: the embedded service takes
 * about 40 ms per order created, so on two cores the shop's pace (and the
 * runs sharing the daemon's process) set it; the bench reports it.
 */
describe("a burst of orders on order.created", () => {
  it("delivers 300 orders placed at 100 a second exactly once, coalesced into few event runs", async () => {
    const r = await runBurst({ orders: 300, perSecond: 100, window: "1s", settleMs: 30_000 });
    const { latenciesMs, ...counts } = r;
    console.log(JSON.stringify({ ...counts, p50: percentile(latenciesMs, 0.5), p95: percentile(latenciesMs, 0.95), max: latenciesMs.at(-1) }));
    expect(r.missing).toEqual([]);
    expect(r.duplicates).toEqual([]);
    expect(r.delivered).toBe(300);
    expect(r.failedRuns).toEqual([]);
    expect(r.eventRuns).toBeGreaterThan(0);
    // A one-second window over the burst: a handful of runs, not hundreds.
    expect(r.eventRuns).toBeLessThan(30);
    expect(r.latenciesMs).toHaveLength(300);
  }, 60_000);
});
