import type { FastifyInstance, FastifyRequest } from "fastify";
import { sendError } from "./envelopes.js";

export type RateClass = "read" | "write" | "options";

export interface RateLimits {
  read: number;
  write: number;
  options: number;
}

/** The seed's limits per minute (v3 part 8). */
export const DEFAULT_LIMITS: RateLimits = { read: 300, write: 60, options: 300 };

const WINDOW_MS = 60_000;

export function rateClass(method: string): RateClass {
  const m = method.toUpperCase();
  if (m === "OPTIONS") return "options";
  if (m === "POST" || m === "PATCH" || m === "PUT" || m === "DELETE") return "write";
  return "read";
}

interface Window {
  start: number;
  used: number;
}

/**
 * Fixed windows aligned to the wall-clock minute, one per API user and class.
 * `Reset` is the end of the current window, so a client that sees
 * `Remaining: 0` can sleep until `Reset` and is sure to get a full budget.
 * Requests without a user name are counted per remote address.
 */
export class Throttle {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limits: RateLimits,
    private readonly now: () => number,
  ) {}

  take(key: string, cls: RateClass): { limit: number; remaining: number; reset: number; allowed: boolean } {
    const now = this.now();
    const start = now - (now % WINDOW_MS);
    const id = `${cls}\n${key}`;
    let window = this.windows.get(id);
    if (!window || window.start !== start) {
      window = { start, used: 0 };
      this.windows.set(id, window);
    }
    const limit = this.limits[cls];
    const allowed = window.used < limit;
    if (allowed) window.used += 1;
    return { limit, remaining: Math.max(0, limit - window.used), reset: Math.floor((start + WINDOW_MS) / 1000), allowed };
  }

  /** `key` names whose budget a request spends: by default its `X-Auth-User` as sent, or its remote address; `exempt` requests spend none. */
  register(app: FastifyInstance, key: (request: FastifyRequest) => string = throttleKey, exempt?: (request: FastifyRequest) => boolean): void {
    app.addHook("onRequest", async (request, reply) => {
      if (exempt?.(request)) return undefined;
      const cls = rateClass(request.method);
      const state = this.take(key(request), cls);
      reply.header("X-Rate-Limit-Limit", String(state.limit));
      reply.header("X-Rate-Limit-Remaining", String(state.remaining));
      reply.header("X-Rate-Limit-Reset", String(state.reset));
      reply.header("X-Rate-Limit-Type", cls);
      if (!state.allowed) {
        reply.header("Retry-After", String(Math.max(1, state.reset - Math.floor(this.now() / 1000))));
        return sendError(request, reply, 429, `too many ${cls} requests: the limit is ${state.limit} per minute; wait until ${state.reset} (X-Rate-Limit-Reset)`);
      }
      return undefined;
    });
  }
}

function throttleKey(request: FastifyRequest): string {
  const user = request.headers["x-auth-user"];
  return typeof user === "string" && user !== "" ? `user:${user}` : `ip:${request.ip}`;
}
