import type { FastifyInstance } from "fastify";
import { newFastify } from "../../embedded/fastify.js";
import { HttpError, sendError, v3Error, validationFailure } from "../../embedded/envelopes.js";
import { Throttle, type RateLimits } from "../../embedded/throttle.js";
import { maskSecrets } from "../../secrets.js";
import { registerAuth } from "./auth.js";
import type { ApiContext } from "./context.js";
import { registerCustom } from "./custom.js";
import { registerHealth } from "./health.js";
import { registerInstalled } from "./installed.js";
import { registerLogs } from "./logs.js";
import { registerRuns } from "./runs.js";

/** The seed's limits per minute (v3 part 8), per API user. */
export const API_LIMITS: RateLimits = { read: 300, write: 60, options: 300 };

/**
 * The daemon's HTTP API: the automations of seed v3 part 4.2, the log search
 * of part 4.4, our run-record routes and the probes. Throttle first (every
 * response carries the four rate-limit headers, a 401 too), then auth.
 */
export async function buildApi(ctx: ApiContext, limits: RateLimits = API_LIMITS): Promise<FastifyInstance> {
  const app = newFastify({ logger: false, bodyLimit: 8 * 1024 * 1024 });
  // An empty PATCH or DELETE body is an empty object, not an error.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const raw = typeof body === "string" ? body : body.toString("utf8");
    if (raw.trim() === "") return done(null, {});
    try {
      done(null, JSON.parse(raw));
    } catch (err) {
      const message = `the body is not valid JSON: ${(err as Error).message}`;
      done(new HttpError(400, message, [{ message, code: 1 }]), undefined);
    }
  });

  const throttle = new Throttle(limits, () => ctx.now().getTime());
  registerAuth(app, ctx.accounts, (server, key) => throttle.register(server, key));
  app.addHook("onResponse", async (request, reply) => {
    ctx.metrics.observeRequest(request.method, reply.statusCode);
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof HttpError) {
      if (error.failed) return reply.code(error.statusCode).send(validationFailure(error.failed.map((f) => (typeof f === "string" ? maskSecrets(f) : { ...f, message: maskSecrets(f.message) }))));
      return sendError(request, reply, error.statusCode, maskSecrets(error.message));
    }
    const status = typeof (error as { statusCode?: unknown }).statusCode === "number" ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) ctx.logger.error({ err: error, url: request.url.split("?")[0] }, "daemon API request failed");
    const message = status >= 500 ? "internal error of the daemon; see its log" : maskSecrets((error as Error).message);
    return reply.code(status).send(v3Error(message));
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, `no such operation: ${request.method} ${request.url.split("?")[0]}`));
  app.options("/*", async (_request, reply) => reply.code(204).header("Allow", "GET, POST, PATCH, PUT, DELETE, OPTIONS").send());

  registerHealth(app, ctx);
  registerCustom(app, ctx);
  registerInstalled(app, ctx);
  registerRuns(app, ctx);
  registerLogs(app, ctx);
  return app;
}
