import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { silentLogger, type Logger } from "../log.js";
import { sleep } from "../retry.js";
import { createTablesLocked } from "../state/pg-connect.js";
import { SEED_LIMITS, type RateClass, type RateLimiter, type RateLimitHeaders, type RateLimits, type RateUsage } from "./limiter.js";

/*
 * One row per account and class, shared by every daemon on the database. The
 * row keeps the times (epoch ms, the database's clock) of the last `limit`
 * grants: a request may go when fewer than `limit` were granted in the last
 * window. That is a sliding window, so no stretch of one window ever holds more
 * than the budget, whichever minute boundaries the service counts by; a token
 * bucket would let twice the budget through across a boundary. The database's
 * clock decides, so daemons with skewed clocks still share one window.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS rate_limits (
    account text NOT NULL, class text NOT NULL,
    grants double precision[] NOT NULL DEFAULT '{}',
    server_limit integer,
    blocked_until double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (account, class))`;

const NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)";

/* $1 account, $2 class, $3 our limit, $4 window ms. One atomic statement: the row lock orders concurrent grants. */
const TAKE = `
  UPDATE rate_limits r SET grants = (CASE WHEN cardinality(r.grants) >= c.cap
      THEN r.grants[cardinality(r.grants) - c.cap + 2 : cardinality(r.grants)] ELSE r.grants END) || c.now
  FROM (SELECT ${NOW_MS} AS now, LEAST($3::integer, COALESCE(server_limit, $3::integer)) AS cap
        FROM rate_limits WHERE account = $1 AND class = $2) c
  WHERE r.account = $1 AND r.class = $2 AND r.blocked_until <= c.now
    AND (cardinality(r.grants) < c.cap OR r.grants[cardinality(r.grants) - c.cap + 1] <= c.now - $4::double precision)
  RETURNING c.now`;

/* Milliseconds until the next grant could succeed, from the same row. */
const WAIT = `
  SELECT GREATEST(1, r.blocked_until - c.now,
      CASE WHEN cardinality(r.grants) >= c.cap THEN r.grants[cardinality(r.grants) - c.cap + 1] + $4::double precision - c.now ELSE 0 END) AS wait
  FROM rate_limits r, (SELECT ${NOW_MS} AS now, LEAST($3::integer, COALESCE(server_limit, $3::integer)) AS cap
        FROM rate_limits WHERE account = $1 AND class = $2) c
  WHERE r.account = $1 AND r.class = $2`;

export interface PostgresLimiterOptions {
  limits?: Partial<RateLimits>;
  /**
   * The window grants are counted in. A second longer than the service's
   * minute, so a request that takes longer to arrive than the one before it
   * still lands in a window with room.
   */
  windowMs?: number;
  /** Margin after a server reset, as in TokenBucketLimiter. */
  resetMarginMs?: number;
  /** Longest sleep before asking the database again (a block lifted elsewhere is noticed). */
  maxPollMs?: number;
  logger?: Logger;
}

/**
 * The rate limiter of a cluster: every daemon (and every `conveyor run`) on
 * the same PostgreSQL database draws an account's read and write budget from
 * one row, so ten daemons together never send an account more than its limit.
 * Within a process, waiters of one account and class queue locally and only
 * the first asks the database, so a busy account costs one query per grant.
 */
export class PostgresLimiter implements RateLimiter {
  private limits: RateLimits;
  private readonly windowMs: number;
  private readonly marginMs: number;
  private readonly maxPollMs: number;
  private readonly logger: Logger;
  private readonly ready = new Map<string, Promise<void>>();
  private readonly lanes = new Map<string, Promise<void>>();
  private schema: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresLimiterOptions = {},
  ) {
    this.limits = { ...SEED_LIMITS, ...options.limits };
    this.windowMs = options.windowMs ?? 61_000;
    this.marginMs = options.resetMarginMs ?? 1_000;
    this.maxPollMs = options.maxPollMs ?? 5_000;
    this.logger = options.logger ?? silentLogger;
  }

  configure(limits: Partial<RateLimits>): void {
    this.limits = { ...this.limits, ...limits };
  }

  acquire(account: string, cls: RateClass, signal?: AbortSignal): Promise<void> {
    const key = `${account}\u0000${cls}`;
    const previous = this.lanes.get(key) ?? Promise.resolve();
    const mine = previous.then(() => this.take(account, cls, signal));
    const lane = mine.then(
      () => undefined,
      () => undefined,
    );
    this.lanes.set(key, lane);
    void lane.then(() => {
      if (this.lanes.get(key) === lane) this.lanes.delete(key);
    });
    return mine;
  }

  observe(account: string, cls: RateClass, headers: RateLimitHeaders): void {
    const limit = Number.isFinite(headers.limit) && headers.limit > 0 ? Math.floor(headers.limit) : null;
    // The server's window is spent: nothing of this class before its reset, for any daemon.
    const blockTo = Number.isFinite(headers.remaining) && headers.remaining < 1 && Number.isFinite(headers.reset) ? headers.reset * 1000 + this.marginMs : null;
    if (limit === null && blockTo === null) return;
    this.write(
      account,
      cls,
      `UPDATE rate_limits SET server_limit = COALESCE($3::integer, server_limit), blocked_until = GREATEST(blocked_until, COALESCE($4::double precision, 0))
       WHERE account = $1 AND class = $2`,
      [limit, blockTo],
    );
  }

  blockUntil(account: string, cls: RateClass, resetUnixSeconds: number): void {
    const resetAt = Number.isFinite(resetUnixSeconds) ? resetUnixSeconds * 1000 : 0;
    this.write(
      account,
      cls,
      `UPDATE rate_limits SET blocked_until = GREATEST(blocked_until, $3::double precision + $4::double precision, ${NOW_MS} + $4::double precision)
       WHERE account = $1 AND class = $2`,
      [resetAt, this.marginMs],
    );
  }

  /**
   * A request that failed without an answer may still have reached the
   * service, so its grant stays counted: releasing it could overrun the budget.
   */
  release(): void {}

  private async take(account: string, cls: RateClass, signal: AbortSignal | undefined): Promise<void> {
    await this.ensureRow(account, cls);
    const args = [account, cls, this.limits[cls], this.windowMs];
    for (;;) {
      if (signal?.aborted) throw canceled();
      const taken = await this.pool.query(TAKE, args);
      if (taken.rowCount === 1) return;
      const row = (await this.pool.query<{ wait: number }>(WAIT, args)).rows[0];
      const wait = Math.min(Math.ceil(Number(row?.wait ?? 1)), this.maxPollMs);
      await sleep(wait, signal).catch(() => {
        throw canceled();
      });
    }
  }

  private ensureRow(account: string, cls: RateClass): Promise<void> {
    const key = `${account}\u0000${cls}`;
    let ready = this.ready.get(key);
    if (!ready) {
      ready = this.ensureSchema()
        .then(() => this.pool.query("INSERT INTO rate_limits (account, class) VALUES ($1, $2) ON CONFLICT DO NOTHING", [account, cls]))
        .then(() => undefined);
      ready.catch(() => this.ready.delete(key));
      this.ready.set(key, ready);
    }
    return ready;
  }

  private ensureSchema(): Promise<void> {
    this.schema ??= ensureLimiterSchema(this.pool).catch((err: unknown) => {
      this.schema = undefined;
      throw err;
    });
    return this.schema;
  }

  /** Grants of every process on the database within the last window, by the database's clock. */
  async usage(account: string, cls: RateClass): Promise<RateUsage> {
    await this.ensureSchema();
    const { rows } = await this.pool.query<{ used: number; server_limit: number | null }>(
      `SELECT (SELECT count(*)::int FROM unnest(grants) g WHERE g > ${NOW_MS} - $3::double precision) AS used, server_limit
       FROM rate_limits WHERE account = $1 AND class = $2`,
      [account, cls, this.windowMs],
    );
    const row = rows[0];
    const limit = Math.min(this.limits[cls], row?.server_limit ?? this.limits[cls]);
    return { limit, used: row?.used ?? 0 };
  }

  /** Resolves once every server answer recorded so far is in the database, so other daemons see it. */
  async settled(): Promise<void> {
    await Promise.all([...this.lanes.values()]);
  }

  /** observe/blockUntil are synchronous in the interface; their writes are ordered before this class's next grant. */
  private write(account: string, cls: RateClass, sql: string, extra: unknown[]): void {
    const key = `${account}\u0000${cls}`;
    const previous = this.lanes.get(key) ?? Promise.resolve();
    const lane = previous
      .then(() => this.ensureRow(account, cls))
      .then(() => this.pool.query(sql, [account, cls, ...extra]))
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err, account, class: cls }, "could not record the service's rate-limit answer in PostgreSQL"),
      );
    this.lanes.set(key, lane);
    void lane.then(() => {
      if (this.lanes.get(key) === lane) this.lanes.delete(key);
    });
  }
}

/** Creates the limiter's table; several daemons starting at once take turns through an advisory lock. */
export async function ensureLimiterSchema(pool: pg.Pool): Promise<void> {
  await createTablesLocked(pool, "conveyor.rate_limits", SCHEMA, "the shared rate-limit table");
}

function canceled(): ConveyorError {
  return new ConveyorError("canceled", "canceled while waiting for the service's rate limit");
}
