import { ConveyorError } from "../errors.js";

export type RateClass = "read" | "write" | "options";

/** The `X-Rate-Limit-*` headers of one response (seed v3 part 8). */
export interface RateLimitHeaders {
  limit: number;
  remaining: number;
  /** Unix time in seconds when the server's window resets. */
  reset: number;
}

/**
 * Paces requests to the service. Kept an interface so a limiter shared by
 * several daemons (through PostgreSQL) can replace the in-process one.
 */
export interface RateLimiter {
  /** Resolves when one request of this class may be sent now. */
  acquire(account: string, cls: RateClass, signal?: AbortSignal): Promise<void>;
  /** The headers of a response to a request granted by `acquire`. */
  observe(account: string, cls: RateClass, headers: RateLimitHeaders): void;
  /** A 429: send nothing of this class before the server's reset. */
  blockUntil(account: string, cls: RateClass, resetUnixSeconds: number): void;
  /** A granted request ended without rate-limit headers (network error): it is no longer in flight. */
  release(account: string, cls: RateClass): void;
  /** For the console's health page: requests granted in the last minute against the limit in force. */
  usage?(account: string, cls: RateClass): Promise<RateUsage>;
}

export interface RateUsage {
  limit: number;
  used: number;
}

export interface RateLimits {
  read: number;
  write: number;
  options: number;
}

/** Seed v3 part 8. */
export const SEED_LIMITS: RateLimits = { read: 300, write: 60, options: 300 };

export interface TokenBucketOptions {
  limits?: Partial<RateLimits>;
  /** Length of the limit's window; the seed's is a minute. Shorter only in tests. */
  windowMs?: number;
  /**
   * Margin after a server reset before sending again. The reset header has a
   * one-second resolution and the server may round it down, so a full second
   * plus a little jitter keeps us clear of its window edge.
   */
  resetMarginMs?: number;
  resetJitterMs?: number;
  random?: () => number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

interface Bucket {
  capacity: number;
  tokens: number;
  updatedAt: number;
  /** What the server's current window still allows, as far as we know; undefined: no window known. */
  windowRemaining: number | undefined;
  windowResetAt: number;
  blockedUntil: number;
  inflight: number;
  waiters: Waiter[];
  timer: NodeJS.Timeout | undefined;
  /** Grant times of the last window, oldest first, for `usage`; trimmed as grants are added. */
  granted: number[];
}

/** Wait for an answer in flight (observe, release or blockUntil wakes the queue), not for time. */
const AWAIT_ANSWER = -1;

function canceled(): ConveyorError {
  return new ConveyorError("canceled", "canceled while waiting for the service's rate limit");
}

/**
 * One token bucket per account and class, refilled continuously at limit per
 * window. The server's headers only ever lower what we allow ourselves: a
 * window the server reports as spent blocks the class until its reset, even
 * if our bucket has tokens (another process may share the budget).
 */
export class TokenBucketLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private limits: RateLimits;
  private readonly windowMs: number;
  private readonly marginMs: number;
  private readonly jitterMs: number;
  private readonly random: () => number;

  constructor(options: TokenBucketOptions = {}) {
    this.limits = { ...SEED_LIMITS, ...options.limits };
    this.windowMs = options.windowMs ?? 60_000;
    this.marginMs = options.resetMarginMs ?? 1_000;
    this.jitterMs = options.resetJitterMs ?? 250;
    this.random = options.random ?? Math.random;
  }

  /** New limits for every bucket (settings changed); tokens above the new capacity are dropped. */
  configure(limits: Partial<RateLimits>): void {
    this.limits = { ...this.limits, ...limits };
    for (const [key, bucket] of this.buckets) {
      const cls = key.slice(key.lastIndexOf("\u0000") + 1) as RateClass;
      bucket.capacity = this.limits[cls];
      bucket.tokens = Math.min(bucket.tokens, bucket.capacity);
    }
  }

  acquire(account: string, cls: RateClass, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(canceled());
    const bucket = this.bucket(account, cls);
    if (bucket.waiters.length === 0 && this.waitMs(bucket, Date.now()) === 0) {
      this.grant(bucket);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const index = bucket.waiters.indexOf(waiter);
          if (index >= 0) bucket.waiters.splice(index, 1);
          reject(canceled());
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      bucket.waiters.push(waiter);
      this.schedule(bucket);
    });
  }

  observe(account: string, cls: RateClass, headers: RateLimitHeaders): void {
    const bucket = this.bucket(account, cls);
    const now = Date.now();
    bucket.inflight = Math.max(0, bucket.inflight - 1);
    if (Number.isFinite(headers.limit) && headers.limit > 0 && headers.limit < bucket.capacity) {
      this.refill(bucket, now);
      bucket.capacity = headers.limit;
      bucket.tokens = Math.min(bucket.tokens, bucket.capacity);
    }
    const resetAt = headers.reset * 1000;
    if (!Number.isFinite(resetAt) || !Number.isFinite(headers.remaining) || resetAt <= now) return;
    // Requests still in flight may not be counted in this answer yet: assume they are not.
    const estimate = Math.max(0, headers.remaining - bucket.inflight);
    if (bucket.windowRemaining === undefined || resetAt > bucket.windowResetAt) {
      bucket.windowRemaining = estimate;
      bucket.windowResetAt = resetAt;
    } else {
      bucket.windowRemaining = Math.min(bucket.windowRemaining, estimate);
    }
    this.schedule(bucket);
  }

  blockUntil(account: string, cls: RateClass, resetUnixSeconds: number): void {
    const bucket = this.bucket(account, cls);
    const now = Date.now();
    bucket.inflight = Math.max(0, bucket.inflight - 1);
    // A reset already past (clock skew, missing header) still earns a pause.
    const resetAt = Math.max(resetUnixSeconds * 1000, now);
    bucket.blockedUntil = Math.max(bucket.blockedUntil, resetAt + this.margin());
    bucket.windowRemaining = 0;
    bucket.windowResetAt = Math.max(bucket.windowResetAt, resetAt);
    this.schedule(bucket);
  }

  release(account: string, cls: RateClass): void {
    const bucket = this.bucket(account, cls);
    bucket.inflight = Math.max(0, bucket.inflight - 1);
    this.schedule(bucket);
  }

  async usage(account: string, cls: RateClass): Promise<RateUsage> {
    const bucket = this.bucket(account, cls);
    this.trim(bucket, Date.now());
    return { limit: bucket.capacity, used: bucket.granted.length };
  }

  private trim(bucket: Bucket, now: number): void {
    const from = now - this.windowMs;
    let drop = 0;
    while (drop < bucket.granted.length && (bucket.granted[drop] ?? 0) <= from) drop++;
    if (drop > 0) bucket.granted.splice(0, drop);
  }

  /** For tests and metrics: what the bucket holds now. */
  snapshot(account: string, cls: RateClass): { tokens: number; capacity: number; blockedUntil: number; windowRemaining: number | undefined; waiting: number } {
    const bucket = this.bucket(account, cls);
    this.refill(bucket, Date.now());
    return {
      tokens: bucket.tokens,
      capacity: bucket.capacity,
      blockedUntil: bucket.blockedUntil,
      windowRemaining: bucket.windowRemaining,
      waiting: bucket.waiters.length,
    };
  }

  private margin(): number {
    return this.marginMs + Math.round(this.random() * this.jitterMs);
  }

  private bucket(account: string, cls: RateClass): Bucket {
    const key = `${account}\u0000${cls}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      const capacity = this.limits[cls];
      bucket = {
        capacity,
        tokens: capacity,
        updatedAt: Date.now(),
        windowRemaining: undefined,
        windowResetAt: 0,
        blockedUntil: 0,
        inflight: 0,
        waiters: [],
        timer: undefined,
        granted: [],
      };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private refill(bucket: Bucket, now: number): void {
    const elapsed = now - bucket.updatedAt;
    if (elapsed > 0) bucket.tokens = Math.min(bucket.capacity, bucket.tokens + (elapsed * bucket.capacity) / this.windowMs);
    bucket.updatedAt = now;
  }

  /** Milliseconds until one request may go; 0 = now; AWAIT_ANSWER = when an answer in flight arrives. */
  private waitMs(bucket: Bucket, now: number): number {
    this.refill(bucket, now);
    if (bucket.windowRemaining !== undefined && now >= bucket.windowResetAt + this.marginMs) bucket.windowRemaining = undefined;
    if (now < bucket.blockedUntil) return bucket.blockedUntil - now;
    if (bucket.windowRemaining !== undefined && bucket.windowRemaining < 1) {
      bucket.blockedUntil = bucket.windowResetAt + this.margin();
      return Math.max(1, bucket.blockedUntil - now);
    }
    // Not knowing the server's window (first use, or a new window), send one request and let
    // its headers tell how much is left before releasing a burst: that is what keeps a budget
    // shared with other processes from answering 429s.
    if (bucket.windowRemaining === undefined && bucket.inflight > 0) return AWAIT_ANSWER;
    if (bucket.tokens >= 1) return 0;
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * this.windowMs) / bucket.capacity));
  }

  private grant(bucket: Bucket): void {
    const now = Date.now();
    this.trim(bucket, now);
    bucket.granted.push(now);
    bucket.tokens -= 1;
    if (bucket.windowRemaining !== undefined) bucket.windowRemaining -= 1;
    bucket.inflight += 1;
  }

  private schedule(bucket: Bucket): void {
    if (bucket.timer) {
      clearTimeout(bucket.timer);
      bucket.timer = undefined;
    }
    this.pump(bucket);
  }

  private pump(bucket: Bucket): void {
    bucket.timer = undefined;
    for (;;) {
      const waiter = bucket.waiters[0];
      if (!waiter) return;
      const wait = this.waitMs(bucket, Date.now());
      if (wait === AWAIT_ANSWER) return;
      if (wait > 0) {
        // Left referenced: a pending promise alone would not keep the process alive for its waiter.
        bucket.timer = setTimeout(() => this.pump(bucket), wait);
        return;
      }
      bucket.waiters.shift();
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener("abort", waiter.onAbort);
      this.grant(bucket);
      waiter.resolve();
    }
  }
}

let shared: TokenBucketLimiter | undefined;

/**
 * The process-wide limiter: every run of an account, whichever client it
 * uses, draws from the same budget. Limits given on a later call replace the
 * earlier ones (settings reloaded).
 */
export function sharedLimiter(limits?: Partial<RateLimits>): TokenBucketLimiter {
  if (!shared) shared = new TokenBucketLimiter({ limits });
  else if (limits) shared.configure(limits);
  return shared;
}
