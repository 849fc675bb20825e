import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RunQueue, type FinishedEvent } from "../../src/daemon/queue.js";
import type { RunRequest } from "../../src/daemon/types.js";
import { attachRunLog } from "../../src/daemon/wiring.js";
import { ConveyorError } from "../../src/errors.js";
import { createLogger } from "../../src/log.js";
import { TimedExecutor } from "./harness.js";

function request(automation: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { automation, account: "acct", mode: "prod", trigger: "manual", diff: true, force: false, notify: false, email: null, ...extra };
}

function setup(concurrency: number, maxRunTimeMs = 3600_000, runMs = 60_000) {
  const executor = new TimedExecutor(runMs);
  const queue = new RunQueue({ executor, concurrency, maxRunTimeMs });
  const finished: FinishedEvent[] = [];
  queue.on("finished", (e) => finished.push(e));
  return { executor, queue, finished };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date("2025-01-01T00:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("RunQueue", () => {
  it("keeps one waiting run per automation and mode and answers a second request with its id", async () => {
    const { queue, executor } = setup(4);
    const first = queue.enqueue(request("a"));
    expect(first.queued).toBe(false);
    await vi.advanceTimersByTimeAsync(0);
    const waiting = queue.enqueue(request("a"));
    expect(waiting).toMatchObject({ queued: true });
    expect(waiting.existing).toBeUndefined();
    const again = queue.enqueue(request("a", { trigger: "api", diff: false }));
    expect(again).toEqual({ id: waiting.id, queued: true, existing: true });
    const debug = queue.enqueue(request("a", { mode: "debug" }));
    expect(debug.id).not.toBe(waiting.id);
    expect(queue.depth()).toEqual({ waiting: 2, running: 1 });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(executor.of("a").map((r) => r.run.id)).toEqual([first.id, waiting.id, debug.id]);
    // The folded request did not change the waiting run it was folded into.
    expect(executor.of("a")[1]?.run).toMatchObject({ trigger: "manual", diff: true });
  });

  it("never overlaps runs of one automation: a waiting run starts when the running one ends", async () => {
    const { queue, executor } = setup(4);
    queue.enqueue(request("a"));
    queue.enqueue(request("a", { mode: "debug" }));
    queue.enqueue(request("b"));
    await vi.advanceTimersByTimeAsync(0);
    expect(queue.list().filter((r) => r.state === "running").map((r) => r.automation)).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(executor.of("a")[1]?.started).toBe(Date.parse("2025-01-01T00:01:00Z"));
    expect(executor.overlapped).toBe(false);
  });

  it("runs at most `concurrency` side by side", async () => {
    const { queue, executor } = setup(2);
    for (const key of ["a", "b", "c", "d", "e"]) queue.enqueue(request(key));
    expect(queue.depth()).toEqual({ waiting: 3, running: 2 });
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    expect(executor.runs).toHaveLength(5);
    expect(executor.runs.every((r) => r.outcome === "success")).toBe(true);
    expect(executor.maxConcurrent).toBe(2);
    expect(executor.runs.map((r) => (r.started - Date.parse("2025-01-01T00:00:00Z")) / 60_000)).toEqual([0, 0, 1, 1, 2]);
  });

  it("cancels a run past max_run_time", async () => {
    const { queue, finished } = setup(2, 30 * 60_000, 3 * 3600_000);
    const { id } = queue.enqueue(request("slow"));
    await vi.advanceTimersByTimeAsync(30 * 60_000 - 1);
    expect(finished).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ outcome: "canceled", reason: "max_run_time", started: true, durationMs: 30 * 60_000 });
    expect(finished[0]?.run.id).toBe(id);
  });

  it("cancels a waiting run before it starts and a running one through its signal", async () => {
    const { queue, executor, finished } = setup(1);
    const running = queue.enqueue(request("a"));
    const waiting = queue.enqueue(request("b"));
    expect(queue.cancel(waiting.id)).toBe(true);
    expect(queue.cancel("r-unknown")).toBe(false);
    expect(finished[0]).toMatchObject({ outcome: "canceled", started: false, reason: "canceled" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(queue.cancel(running.id)).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(finished[1]).toMatchObject({ outcome: "canceled", started: true, reason: "canceled" });
    expect(executor.of("b")).toHaveLength(0);
  });

  it("logs run_finished with the error that ended the run or why it had nothing to do, at a level by outcome", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: "info", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    const queue = new RunQueue({
      concurrency: 2,
      maxRunTimeMs: 60_000,
      executor: {
        execute: async (run) =>
          run.automation === "a"
            ? { outcome: "failed", error: { code: "connection", message: "ftp.example.com refused the login" } }
            : run.automation === "c"
              ? { outcome: "nothing", error: null, note: "file_configs[0]: no file to import: the folder is empty" }
              : { outcome: "success", error: null },
      },
    });
    attachRunLog(queue, logger);
    queue.enqueue(request("a"));
    queue.enqueue(request("b"));
    queue.enqueue(request("c"));
    await vi.advanceTimersByTimeAsync(0);
    const ends = lines.filter((l) => l.event === "run_finished");
    expect(ends.map((l) => [l.automation, l.level, l.error_code ?? null, l.error_message ?? null, l.note ?? null])).toEqual([
      ["a", "error", "connection", "ftp.example.com refused the login", null],
      ["b", "info", null, null, null],
      ["c", "info", null, null, "file_configs[0]: no file to import: the folder is empty"],
    ]);
  });

  it("reports a throwing executor as failed and goes on with the next run", async () => {
    const finished: FinishedEvent[] = [];
    let calls = 0;
    const queue = new RunQueue({
      concurrency: 1,
      maxRunTimeMs: 60_000,
      executor: {
        execute: async () => {
          calls++;
          if (calls === 1) throw new Error("pipeline broke");
          return { outcome: "nothing" };
        },
      },
    });
    queue.on("finished", (e) => finished.push(e));
    queue.on("started", () => {
      throw new Error("a broken listener must not stop the queue");
    });
    queue.enqueue(request("a"));
    queue.enqueue(request("b"));
    await vi.advanceTimersByTimeAsync(0);
    expect(finished.map((f) => f.outcome)).toEqual(["failed", "nothing"]);
    expect((finished[0]?.error as Error).message).toBe("pipeline broke");
  });

  it("drains gracefully when the run in flight ends within the grace period", async () => {
    const { queue, finished } = setup(2, 3600_000, 20_000);
    queue.enqueue(request("a"));
    queue.enqueue(request("a"));
    const drained = queue.drain(60_000);
    expect(() => queue.enqueue(request("b"))).toThrow(ConveyorError);
    await vi.advanceTimersByTimeAsync(20_000);
    await expect(drained).resolves.toEqual({ finished: 1, canceled: 0, stuck: [], kept: 0 });
    expect(finished.map((f) => [f.outcome, f.started, f.reason])).toEqual([
      ["canceled", false, "shutdown"],
      ["success", true, null],
    ]);
  });

  it("cancels the run in flight when the grace period runs out", async () => {
    const { queue, finished } = setup(2, 3600_000, 10 * 60_000);
    queue.enqueue(request("a"));
    const drained = queue.drain(30_000);
    await vi.advanceTimersByTimeAsync(30_000);
    await expect(drained).resolves.toEqual({ finished: 0, canceled: 1, stuck: [], kept: 0 });
    expect(finished[0]).toMatchObject({ outcome: "canceled", reason: "shutdown", durationMs: 30_000 });
  });

  it("gives up on a run that ignores its abort signal after the settle time and names it", async () => {
    const { queue, executor } = setup(1, 3600_000, 10 * 60_000);
    executor.deaf = true;
    const { id } = queue.enqueue(request("a"));
    const drained = queue.drain(1000, 2000);
    await vi.advanceTimersByTimeAsync(3000);
    await expect(drained).resolves.toEqual({ finished: 0, canceled: 1, stuck: [id], kept: 0 });
  });

  it("rejects a concurrency below 1", () => {
    expect(() => new RunQueue({ executor: new TimedExecutor(), concurrency: 0, maxRunTimeMs: 1 })).toThrow(/concurrency: 0/);
  });
});
