import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ServiceClient } from "../../src/service/client.js";
import { sharedLimiter, TokenBucketLimiter } from "../../src/service/limiter.js";

const A = "http://svc#demo";

/**
 * Starts acquisitions and records when each is granted, on the fake clock.
 * Each granted request is answered at once without rate headers (release).
 */
function track(limiter: TokenBucketLimiter, count: number, cls: "read" | "write" = "write"): number[] {
  const granted: number[] = [];
  for (let i = 0; i < count; i++)
    void limiter.acquire(A, cls).then(() => {
      granted.push(Date.now());
      limiter.release(A, cls);
    });
  return granted;
}

describe("TokenBucketLimiter", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2025-03-01T10:00:00.000Z"));
  });
  afterEach(() => vi.useRealTimers());

  it("grants a full bucket at once, then nothing until a token has refilled", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 6 } });
    const start = Date.now();
    const granted = track(limiter, 8);
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toHaveLength(6);
    // 6 per minute: one token every 10 s.
    await vi.advanceTimersByTimeAsync(9_999);
    expect(granted).toHaveLength(6);
    await vi.advanceTimersByTimeAsync(1);
    expect(granted).toHaveLength(7);
    expect(granted[6]).toBe(start + 10_000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(granted).toEqual([...Array(6).fill(start), start + 10_000, start + 20_000]);
  });

  it("keeps classes and accounts apart", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 1, read: 2 } });
    const writes = track(limiter, 2, "write");
    const reads = track(limiter, 2, "read");
    let other = false;
    void limiter.acquire("http://svc#other", "write").then(() => (other = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toHaveLength(1);
    expect(reads).toHaveLength(2);
    expect(other).toBe(true);
  });

  it("lowers its capacity to the server's limit, never raises it", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 60 } });
    await limiter.acquire(A, "write");
    const reset = Math.ceil(Date.now() / 1000) + 60;
    limiter.observe(A, "write", { limit: 5, remaining: 4, reset });
    expect(limiter.snapshot(A, "write").capacity).toBe(5);
    limiter.observe(A, "write", { limit: 500, remaining: 499, reset });
    expect(limiter.snapshot(A, "write").capacity).toBe(5);
    expect(limiter.snapshot(A, "write").windowRemaining).toBe(4);
  });

  it("blocks when the server reports its window spent, even with tokens left, until the reset", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 60 }, resetMarginMs: 1_000, resetJitterMs: 0 });
    await limiter.acquire(A, "write");
    const reset = Math.floor(Date.now() / 1000) + 30;
    // Another process spent the budget: the server says nothing is left.
    limiter.observe(A, "write", { limit: 60, remaining: 0, reset });
    expect(limiter.snapshot(A, "write").tokens).toBeGreaterThan(50);
    const granted = track(limiter, 1);
    await vi.advanceTimersByTimeAsync(30_999);
    expect(granted).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(granted).toEqual([reset * 1000 + 1_000]);
  });

  it("counts requests still in flight against what the server reports", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 10 }, resetJitterMs: 0 });
    // The first request learns the window; then three go out together.
    await limiter.acquire(A, "write");
    limiter.observe(A, "write", { limit: 10, remaining: 9, reset: Math.floor(Date.now() / 1000) + 60 });
    for (let i = 0; i < 3; i++) await limiter.acquire(A, "write");
    const reset = Math.floor(Date.now() / 1000) + 60;
    // The first answer says 3 are left, but two more requests of ours are on their way.
    limiter.observe(A, "write", { limit: 10, remaining: 3, reset: reset + 1 });
    expect(limiter.snapshot(A, "write").windowRemaining).toBe(1);
    // A later, staler answer cannot raise it again.
    limiter.observe(A, "write", { limit: 10, remaining: 5, reset: reset + 1 });
    expect(limiter.snapshot(A, "write").windowRemaining).toBe(1);
  });

  it("while the server's window is unknown, sends one request and waits for its answer", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 60 }, resetMarginMs: 1_000, resetJitterMs: 0 });
    const granted: number[] = [];
    for (let i = 0; i < 5; i++) void limiter.acquire(A, "write").then(() => granted.push(i));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(granted).toEqual([0]);
    const reset = Math.floor(Date.now() / 1000) + 20;
    // Another client has left two requests of this window.
    limiter.observe(A, "write", { limit: 60, remaining: 2, reset });
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toEqual([0, 1, 2]);
    limiter.observe(A, "write", { limit: 60, remaining: 1, reset });
    limiter.observe(A, "write", { limit: 60, remaining: 0, reset });
    await vi.advanceTimersByTimeAsync(reset * 1000 + 1_000 - Date.now() - 1);
    expect(granted).toHaveLength(3);
    // A new window: again one probe first.
    await vi.advanceTimersByTimeAsync(1);
    expect(granted).toEqual([0, 1, 2, 3]);
    limiter.release(A, "write");
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toEqual([0, 1, 2, 3, 4]);
  });

  it("on 429 sends nothing of that class before the reset plus margin, then resumes", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 60, read: 60 }, resetMarginMs: 500, resetJitterMs: 0 });
    await limiter.acquire(A, "write");
    const reset = Math.floor(Date.now() / 1000) + 5;
    limiter.blockUntil(A, "write", reset);
    const writes = track(limiter, 2, "write");
    const reads = track(limiter, 1, "read");
    await vi.advanceTimersByTimeAsync(5_499);
    expect(writes).toHaveLength(0);
    expect(reads).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([reset * 1000 + 500, reset * 1000 + 500]);
  });

  it("pauses even when the 429 carries a reset already past", async () => {
    const limiter = new TokenBucketLimiter({ resetMarginMs: 1_000, resetJitterMs: 0 });
    limiter.blockUntil(A, "read", Date.now() / 1000 - 10);
    const granted = track(limiter, 1, "read");
    await vi.advanceTimersByTimeAsync(999);
    expect(granted).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(granted).toHaveLength(1);
  });

  it("serves waiters in order and drops a canceled one", async () => {
    const limiter = new TokenBucketLimiter({ limits: { write: 1 } });
    await limiter.acquire(A, "write");
    limiter.release(A, "write");
    const order: string[] = [];
    const controller = new AbortController();
    const canceled = limiter.acquire(A, "write", controller.signal).then(
      () => order.push("canceled-granted"),
      (err: Error) => order.push(`canceled:${err.message}`),
    );
    void limiter.acquire(A, "write").then(() => order.push("second"));
    controller.abort();
    await canceled;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(order).toEqual(["canceled:canceled while waiting for the service's rate limit", "second"]);
  });

  it("never grants more than the limit in any window of the bucket's length", async () => {
    const limiter = new TokenBucketLimiter({ limits: { read: 30 } });
    const granted = track(limiter, 200, "read");
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    expect(granted.length).toBeGreaterThan(150);
    for (const start of granted) {
      const inWindow = granted.filter((t) => t >= start && t < start + 60_000).length;
      // A full bucket plus what refills during the minute.
      expect(inWindow).toBeLessThanOrEqual(30 + 30);
    }
    // After the first burst, the pace is the refill rate: 2 s apart.
    expect((granted[40] ?? 0) - (granted[39] ?? 0)).toBe(2_000);
  });

  it("every client of an account draws from the one process-wide budget", async () => {
    const options = { baseUrl: "http://127.0.0.1:9/", apiUser: "acct", apiToken: "shared-t0ken-1" };
    const runA = new ServiceClient(options).withCounter({ read: 0, write: 0 });
    const runB = new ServiceClient({ ...options, baseUrl: "http://127.0.0.1:9" });
    expect(runA.limiter).toBe(runB.limiter);
    expect(runA.account).toBe(runB.account);
    expect(sharedLimiter({ write: 2 })).toBe(runA.limiter);
    const limiter = sharedLimiter();
    await limiter.acquire(runA.account, "write");
    limiter.release(runA.account, "write");
    await limiter.acquire(runB.account, "write");
    limiter.release(runB.account, "write");
    // Two runs spent the budget of 2: a third waits for a refill (30 s at 2 a minute).
    let third = false;
    void limiter.acquire(runA.account, "write").then(() => (third = true));
    await vi.advanceTimersByTimeAsync(29_000);
    expect(third).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(third).toBe(true);
  });
});
