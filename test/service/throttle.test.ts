import { afterEach, describe, expect, it } from "vitest";
import { ServiceClient } from "../../src/service/client.js";
import { TokenBucketLimiter } from "../../src/service/limiter.js";
import { json, startFaultServer, type FaultServer } from "./fault-server.js";

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Answer {
  at: number;
  status: number;
  reset: number;
}

/**
 * A server throttling writes in fixed windows of `windowS` seconds aligned to
 * the clock, like the seed's service, with a short window so tests are quick.
 */
async function throttlingServer(
  limit: number,
  windowS: number,
  /** Requests another client makes in the window when ours arrives, by our request's number in that window. */
  foreign: (ourNth: number) => number = () => 0,
): Promise<{ answers: Answer[]; url: string }> {
  const answers: Answer[] = [];
  const used = new Map<number, number>();
  const ours = new Map<number, number>();
  server = await startFaultServer((req, res) => {
    const now = Date.now();
    const start = Math.floor(now / 1000 / windowS) * windowS;
    const reset = start + windowS;
    const nth = (ours.get(start) ?? 0) + 1;
    ours.set(start, nth);
    const before = (used.get(start) ?? 0) + foreign(nth);
    const allowed = before < limit;
    used.set(start, allowed ? before + 1 : before);
    const headers = {
      "x-rate-limit-limit": String(limit),
      "x-rate-limit-remaining": String(Math.max(0, limit - (used.get(start) ?? 0))),
      "x-rate-limit-reset": String(reset),
      "x-rate-limit-type": req.method === "GET" ? "read" : "write",
    };
    answers.push({ at: now, status: allowed ? 200 : 429, reset });
    if (!allowed) json(res, 429, { result: "error", message: "too many requests" }, headers);
    else json(res, 200, { result: "success", message: "updated" }, headers);
  });
  return { answers, url: server.url };
}

/** After a 429, nothing new reaches the server before the reset it announced. */
function expectSilenceAfter429(answers: Answer[]): void {
  for (const [i, a] of answers.entries()) {
    if (a.status !== 429) continue;
    for (const b of answers.slice(i + 1)) expect(b.at).toBeGreaterThanOrEqual(a.reset * 1000);
  }
}

function perWindow(answers: Answer[], windowS: number, status: number): Map<number, number> {
  const counts = new Map<number, number>();
  for (const a of answers) {
    if (a.status !== status) continue;
    const w = Math.floor(a.at / 1000 / windowS);
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return counts;
}

describe("rate limiting against a throttling server", () => {
  it("a storm of writes is served without one 429 when our bucket knows the limit", async () => {
    const { answers, url } = await throttlingServer(4, 3);
    const limiter = new TokenBucketLimiter({ limits: { write: 4 }, windowMs: 3_000, resetMarginMs: 150, resetJitterMs: 50 });
    const client = new ServiceClient({ baseUrl: url, apiUser: "demo", apiToken: "t0ken-storm", limiter });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => client.itemAction("edit", `G-${i}`, { price: "1" })));
    expect(results).toHaveLength(10);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(0);
    expect(Math.max(...perWindow(answers, 3, 200).values())).toBeLessThanOrEqual(4);
    expect(client.counter.write).toBe(10);
  }, 30_000);

  it("when another client shares the budget, at most one 429 per window and silence until its reset", async () => {
    // Whenever our second request of a window arrives, someone else has just spent one.
    const { answers, url } = await throttlingServer(4, 2, (nth) => (nth === 2 ? 1 : 0));
    const limiter = new TokenBucketLimiter({ limits: { write: 4 }, windowMs: 2_000, resetMarginMs: 150, resetJitterMs: 50 });
    const client = new ServiceClient({ baseUrl: url, apiUser: "demo", apiToken: "t0ken-storm", limiter });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => client.itemAction("add", `N-${i}`, { title: "t" })));
    expect(results).toHaveLength(8);
    // Each add reached the server once with success: a throttled request was not processed, so it was repeated.
    expect(answers.filter((a) => a.status === 200)).toHaveLength(8);
    expect(answers.some((a) => a.status === 429)).toBe(true);
    for (const count of perWindow(answers, 2, 429).values()) expect(count).toBeLessThanOrEqual(1);
    expectSilenceAfter429(answers);
    expect(client.counter.write).toBe(answers.length);
  }, 30_000);

  it("a first request refused because another process spent the window waits for the reset, then is served", async () => {
    let spent = false;
    const { answers, url } = await throttlingServer(3, 2, () => (spent ? 0 : ((spent = true), 3)));
    const limiter = new TokenBucketLimiter({ limits: { write: 3 }, windowMs: 2_000, resetMarginMs: 150, resetJitterMs: 0 });
    const client = new ServiceClient({ baseUrl: url, apiUser: "demo", apiToken: "t0ken-storm", limiter });
    await Promise.all([client.itemAction("edit", "G-1", { price: "2" }), client.itemAction("edit", "G-2", { price: "2" })]);
    expect(answers.map((a) => a.status)).toEqual([429, 200, 200]);
    expectSilenceAfter429(answers);
    const [first] = answers;
    expect(answers[1]?.at).toBeGreaterThanOrEqual((first?.reset ?? 0) * 1000 + 150);
  }, 30_000);
});
