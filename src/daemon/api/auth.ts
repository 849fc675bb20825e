import type { FastifyInstance } from "fastify";
import { sendError, text } from "../../embedded/envelopes.js";
import type { AccountStore } from "../accounts.js";

/** Routes open without credentials: probes and the metrics scrape. */
const PUBLIC = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Seed v3 part 5: `X-Auth-User` and `X-Auth-Token` together, checked against
 * the daemon's accounts in constant time. `X-Auth-Integration` is only a
 * partner name and never lets a request in. Registered after the throttle, so
 * a 401 still carries the rate-limit headers.
 */
export function registerAuth(app: FastifyInstance, accounts: AccountStore): void {
  app.addHook("onRequest", async (request, reply) => {
    if (reply.sent) return reply;
    if (PUBLIC.has(request.url.split("?")[0] ?? "") || request.method === "OPTIONS") return undefined;
    const user = text(request.headers["x-auth-user"]);
    const token = text(request.headers["x-auth-token"]);
    if (user !== undefined && token !== undefined && (await accounts.verify(user, token))) return undefined;
    const why = user === undefined || token === undefined ? "missing X-Auth-User or X-Auth-Token header" : "wrong API user or token";
    return sendError(request, reply, 401, `${why}: send both headers with an account's API user and token (conveyor accounts list shows the users)`);
  });
}
