import type { FastifyInstance, FastifyRequest } from "fastify";
import { sendError, text } from "../../http/envelopes.js";
import { isConsolePath } from "../../console/paths.js";
import { isIntakePath } from "../../events/intake.js";
import type { AccountStore } from "../accounts.js";

/** Routes open without credentials: probes and the metrics scrape (and the webhook intake, whose signature is its proof). */
const PUBLIC = new Set(["/healthz", "/readyz", "/metrics"]);

/** Requests whose credentials were checked and found right, with their API user. */
const verified = new WeakMap<FastifyRequest, string>();

/**
 * The throttle's key: the API user only once its token was checked, so nobody
 * can spend an account's budget by sending its (public) user name with a
 * wrong token; everything else is counted per remote address.
 */
export function throttleKey(request: FastifyRequest): string {
  const user = verified.get(request);
  return user !== undefined ? `user:${user}` : `ip:${request.ip}`;
}

/**
 * Seed v3 part 5: `X-Auth-User` and `X-Auth-Token` together, checked against
 * the daemon's accounts in constant time. `X-Auth-Integration` is only a
 * partner name and never lets a request in. Two hooks around the throttle:
 * the check first (the throttle keys on its answer), the refusal after, so a
 * 401 still carries the rate-limit headers and failed attempts are throttled.
 */
export function registerAuth(app: FastifyInstance, accounts: AccountStore, throttle: (app: FastifyInstance, key: (request: FastifyRequest) => string) => void): void {
  app.addHook("onRequest", async (request) => {
    const user = text(request.headers["x-auth-user"]);
    const token = text(request.headers["x-auth-token"]);
    if (user !== undefined && token !== undefined && (await accounts.verify(user, token))) verified.set(request, user);
  });
  throttle(app, throttleKey);
  app.addHook("onRequest", async (request, reply) => {
    if (reply.sent) return reply;
    const path = request.url.split("?")[0] ?? "";
    if (PUBLIC.has(path) || isIntakePath(path) || request.method === "OPTIONS") return undefined;
    // The console's pages check their own session cookie (src/console/session-routes.ts).
    if (isConsolePath(request.url)) return undefined;
    if (verified.has(request)) return undefined;
    const user = text(request.headers["x-auth-user"]);
    const token = text(request.headers["x-auth-token"]);
    const why = user === undefined || token === undefined ? "missing X-Auth-User or X-Auth-Token header" : "wrong API user or token";
    return sendError(request, reply, 401, `${why}: send both headers with an account's API user and token (conveyor accounts list shows the users)`);
  });
}
