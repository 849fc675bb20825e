import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresLimiter } from "../../src/service/pg-limiter.js";
import { openSharedPool } from "../../src/service/pg-pool.js";
import { freshSchema } from "./pg-env.js";

/** Most grants inside any stretch of `windowMs` (times sorted ascending). */
function busiestWindow(times: number[], windowMs: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] ?? 0) - (times[start] ?? 0) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

describe("PostgresLimiter: one budget for several daemons", () => {
  const db = freshSchema("lim");
  const pools: pg.Pool[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 4; i++) pools.push((await openSharedPool(db.url, { max: 3 })).pool);
  });
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    await db.drop();
  });

  it("four limiters of one account never grant more than the limit in any window together", async () => {
    const windowMs = 1_500;
    const limiters = pools.map((pool) => new PostgresLimiter(pool, { limits: { write: 8 }, windowMs, maxPollMs: 200 }));
    // The database's own grant times, recorded as each grant is made: the resolve times seen here carry
    // the event loop's latency, and on a loaded machine a late batch of them crowded into the next window.
    const [first] = limiters;
    const pool = pools[0];
    if (!first || !pool) throw new Error("no limiter");
    await first.acquire("warm-up", "write");
    await pool.query(`CREATE TABLE grant_log (t double precision NOT NULL);
      CREATE FUNCTION log_grant() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF NEW.account = 'acme' AND NEW.grants IS DISTINCT FROM OLD.grants THEN INSERT INTO grant_log VALUES (NEW.grants[cardinality(NEW.grants)]); END IF;
        RETURN NEW; END $$;
      CREATE TRIGGER log_grant AFTER UPDATE ON rate_limits FOR EACH ROW EXECUTE FUNCTION log_grant();`);
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const limiter = limiters[i % limiters.length];
        if (!limiter) throw new Error("no limiter");
        await limiter.acquire("acme", "write");
      }),
    );
    const elapsed = Date.now() - started;
    // 32 grants at 8 per window: the first 8 at once, then three more windows.
    expect(elapsed).toBeGreaterThanOrEqual(3 * windowMs - 100);
    const log = await pool.query<{ t: number }>("SELECT t FROM grant_log ORDER BY t");
    const granted = log.rows.map((r) => Number(r.t));
    expect(granted).toHaveLength(32);
    expect(busiestWindow(granted, windowMs)).toBe(8);
    const row = await pools[0]?.query<{ grants: number[] }>("SELECT grants FROM rate_limits WHERE account = 'acme' AND class = 'write'");
    const stored = (row?.rows[0]?.grants ?? []).map(Number);
    expect(stored).toHaveLength(8);
    // Another account and another class have budgets of their own.
    const t0 = Date.now();
    await Promise.all([limiters[0]?.acquire("other", "write"), limiters[1]?.acquire("acme", "read")]);
    expect(Date.now() - t0).toBeLessThan(windowMs / 2);
  });

  it("a 429 on one daemon holds the class on every daemon until the reset", async () => {
    const [a, b] = pools.map((pool) => new PostgresLimiter(pool, { limits: { read: 100 }, resetMarginMs: 0, maxPollMs: 100 }));
    if (!a || !b) throw new Error("no limiters");
    await a.acquire("blocked", "read");
    const reset = Math.ceil((Date.now() + 1_200) / 1000);
    a.blockUntil("blocked", "read", reset);
    // What the other daemon sees is what reached the database.
    await a.settled();
    const t0 = Date.now();
    await b.acquire("blocked", "read");
    expect(Date.now()).toBeGreaterThanOrEqual(reset * 1000 - 20);
    expect(Date.now() - t0).toBeGreaterThan(500);
  });

  it("headers reporting a spent window block the class; a lower server limit lowers the budget", async () => {
    const [a, b] = pools.map((pool) => new PostgresLimiter(pool, { limits: { read: 100 }, resetMarginMs: 0, windowMs: 60_000, maxPollMs: 100 }));
    if (!a || !b) throw new Error("no limiters");
    await a.acquire("lowered", "read");
    a.observe("lowered", "read", { limit: 2, remaining: 1, reset: Math.ceil(Date.now() / 1000) + 60 });
    await a.acquire("lowered", "read");
    const controller = new AbortController();
    const third = b.acquire("lowered", "read", controller.signal);
    setTimeout(() => controller.abort(), 400);
    await expect(third).rejects.toMatchObject({ code: "canceled" });
  });
});
