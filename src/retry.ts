import { ConveyorError, toConveyorError } from "./errors.js";

/**
 * The one place where retry and backoff are decided. Callers say how many
 * attempts and how long to wait; whether an error is worth another try is the
 * error's own `retryable` flag.
 */
export interface RetryPolicy {
  attempts: number;
  /** First delay in milliseconds; doubled each attempt, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Called before each wait; for logs and counters. */
  onRetry?: (err: ConveyorError, attempt: number, delayMs: number) => void;
  signal?: AbortSignal;
  /** Overrides the error's own flag, e.g. to refuse retrying a write. */
  shouldRetry?: (err: ConveyorError) => boolean;
  /** A wait the server asked for (Retry-After, rate-limit reset) wins over the backoff. */
  delayFor?: (err: ConveyorError) => number | undefined;
}

export const CONNECT_RETRY: RetryPolicy = { attempts: 3, baseDelayMs: 500, maxDelayMs: 5_000 };

export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number, random = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
  // Full jitter: spreads a thundering herd of workers across the window.
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ConveyorError("canceled", "canceled while waiting to retry"));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new ConveyorError("canceled", "canceled while waiting to retry"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export async function withRetry<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (raw) {
      const err = toConveyorError(raw);
      const retry = policy.shouldRetry ? policy.shouldRetry(err) : err.retryable;
      if (!retry || attempt >= policy.attempts || policy.signal?.aborted) throw err;
      const delay = policy.delayFor?.(err) ?? backoffDelay(attempt, policy.baseDelayMs, policy.maxDelayMs);
      policy.onRetry?.(err, attempt, delay);
      await sleep(delay, policy.signal);
    }
  }
}
