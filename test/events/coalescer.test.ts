import { afterEach, describe, expect, it, vi } from "vitest";
import { Coalescer } from "../../src/events/coalescer.js";
import { silentLogger } from "../../src/log.js";
import type { RunRequest } from "../../src/daemon/types.js";

/** A coalescer over an in-memory set of automations with pending events. */
function coalescer(pending: Set<string>): { c: Coalescer; asked: RunRequest[] } {
  const asked: RunRequest[] = [];
  const c = new Coalescer({
    windowMs: 50,
    enqueue: async (request) => {
      asked.push(request);
      return { id: `run-${asked.length}`, queued: false };
    },
    accountOf: async () => "demo",
    hasPending: async (automation) => pending.has(automation),
    logger: silentLogger,
  });
  return { c, asked };
}

describe("Coalescer", () => {
  afterEach(() => vi.useRealTimers());

  it("asks for one event run per window, however many events arrive", async () => {
    vi.useFakeTimers();
    const { c, asked } = coalescer(new Set(["7"]));
    c.arm(["7"]);
    c.arm(["7"]);
    expect(c.isArmed("7")).toBe(true);
    await vi.advanceTimersByTimeAsync(60);
    expect(asked.map((r) => [r.automation, r.trigger, r.diff])).toEqual([["7", "event", true]]);
    c.stop();
  });

  it("asks for nothing when a run queued earlier took the events before the window passed", async () => {
    vi.useFakeTimers();
    const pending = new Set(["7"]);
    const { c, asked } = coalescer(pending);
    // A run ends while the next one, already queued, has not taken the events yet: the coalescer arms again.
    await c.finished("7");
    expect(c.isArmed("7")).toBe(true);
    // The queued run starts and takes them.
    pending.delete("7");
    await vi.advanceTimersByTimeAsync(60);
    expect(asked).toEqual([]);
    c.stop();
  });

  it("does not arm when a run ends with nothing pending", async () => {
    const { c } = coalescer(new Set());
    await c.finished("7");
    expect(c.isArmed("7")).toBe(false);
    c.stop();
  });
});
