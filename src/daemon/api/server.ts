import type { FastifyInstance } from "fastify";
import { newFastify } from "../../http/fastify.js";
import { sendError } from "../../http/envelopes.js";
import { registerBodyLimits, type BodyLimits } from "../../http/body.js";
import { registerErrorReplies } from "../../http/errors.js";
import { Throttle, type RateLimits } from "../../http/throttle.js";
import { MAX_DEFINITION_BYTES } from "../../definition/index.js";
import { maskSecrets } from "../../secrets.js";
import { isIntakePath, registerIntake } from "../../events/intake.js";
import { registerAuth } from "./auth.js";
import type { ApiContext } from "./context.js";
import { registerCustom } from "./custom.js";
import { registerHealth } from "./health.js";
import { registerInstalled } from "./installed.js";
import { registerLogs } from "./logs.js";
import { registerRunTables } from "./run-tables.js";
import { registerRuns } from "./runs.js";
import { registerUndo } from "./undo-route.js";
import { registerWebhookSecret } from "./webhook-secret.js";

/** The seed's limits per minute (v3 part 8), per API user. */
export const API_LIMITS: RateLimits = { read: 300, write: 60, options: 300 };

/**
 * The largest body per route: a definition as large as a definition file may
 * be; a log search is a few fields; the run routes take no body at all.
 */
export const API_BODY_LIMITS: BodyLimits = [
  ["/v3/automations/", MAX_DEFINITION_BYTES],
  ["/v3/logs", 64 * 1024],
];

/**
 * The daemon's HTTP API: the automations of seed v3 part 4.2, the log search
 * of part 4.4, our run-record routes and the probes. Throttle first (every
 * response carries the four rate-limit headers, a 401 too), then auth.
 */
export async function buildApi(ctx: ApiContext, limits: RateLimits = API_LIMITS): Promise<FastifyInstance> {
  const app = newFastify({ logger: false, bodyLimit: 64 * 1024 });
  registerBodyLimits(app, API_BODY_LIMITS);

  const throttle = new Throttle(limits, () => ctx.now().getTime());
  // The service delivers every account's webhooks from one address: a per-address budget would refuse them in a burst.
  registerAuth(app, ctx.accounts, (server, key) => throttle.register(server, key, (request) => isIntakePath(request.url)));
  app.addHook("onResponse", async (request, reply) => {
    ctx.metrics.observeRequest(request.method, reply.statusCode);
  });

  registerErrorReplies(app, {
    v1: false,
    mask: maskSecrets,
    internal: "internal error of the daemon; see its log",
    logger: ctx.logger,
    logMessage: "daemon API request failed",
    logUrl: (request) => request.url.split("?")[0] ?? request.url,
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, `no such operation: ${request.method} ${request.url.split("?")[0]}`));
  app.options("/*", async (_request, reply) => reply.code(204).header("Allow", "GET, POST, PATCH, PUT, DELETE, OPTIONS").send());

  registerHealth(app, ctx);
  registerCustom(app, ctx);
  registerInstalled(app, ctx);
  registerRuns(app, ctx);
  registerRunTables(app, ctx);
  registerUndo(app, ctx);
  registerLogs(app, ctx);
  if (ctx.events) registerIntake(app, ctx.events);
  registerWebhookSecret(app, ctx);
  return app;
}
