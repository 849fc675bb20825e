import type { FastifyInstance } from "fastify";
import formbody from "@fastify/formbody";
import multipart from "@fastify/multipart";
import { registerAuth, type Account } from "./auth.js";
import { newFastify } from "../http/fastify.js";
import { registerBodyLimits, type BodyLimits } from "../http/body.js";
import { sendError } from "../http/envelopes.js";
import { registerErrorReplies } from "../http/errors.js";
import type { RateLimits } from "../http/throttle.js";
import { Throttle } from "../http/throttle.js";
import type { ServiceContext } from "./context.js";
import { registerItems } from "./items.js";
import { registerBulk } from "./bulk.js";
import { registerExports } from "./exports.js";
import { registerOrders } from "./orders.js";
import { registerLogs } from "./logs.js";
import { registerWebhooks } from "./webhooks.js";
import { registerV1Orders } from "./v1-orders.js";
import { registerOptions } from "./options.js";
import { authUsers, registerProfile } from "./profile.js";
import { UserStore } from "./user-store.js";
import { registerAssets } from "./assets.js";
import { registerNotInSandbox } from "./not-in-sandbox.js";
import { registerV3Reads } from "./v3-reads.js";

/** Largest bulk upload accepted (the seed does not say; 1 GB keeps a runaway client from filling the disk). */
const MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;

/**
 * The largest body per route; a bulk upload (multipart) has its own limit above.
 * A page of orders the worker sends at once stays well under the orders'
 * limit; a log search, a webhook endpoint or an export request is a few fields.
 */
export const SERVICE_BODY_LIMITS: BodyLimits = [
  ["/v3/orders", 16 * 1024 * 1024],
  ["/v1/editor/items", 1024 * 1024],
  ["/v1/bulk/exports", 64 * 1024],
  ["/v1/logs", 64 * 1024],
  ["/v3/logs", 64 * 1024],
  ["/v3/webhooks", 64 * 1024],
  ["/v1/auth", 64 * 1024],
  ["/v1/orders", 16 * 1024 * 1024],
  ["/v1/settings", 1024 * 1024],
  ["/v1/profile", 64 * 1024],
  ["/v1/imports", 64 * 1024],
];

/**
 * The fastify app: throttle first (so even a 401 or 404 carries the four
 * rate-limit headers), then auth, then the routes of each resource.
 */
export async function buildServer(ctx: ServiceContext, account: Account, limits: RateLimits): Promise<FastifyInstance> {
  // Path values are searches and order keys (a channel of 50 and an order number of 100 characters): Fastify's 100 is too short.
  const app = newFastify({ logger: false, bodyLimit: 64 * 1024 * 1024, routerOptions: { maxParamLength: 2048 } });

  registerBodyLimits(app, SERVICE_BODY_LIMITS);
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20 } });

  new Throttle(limits, ctx.now).register(app);
  const users = new UserStore(ctx.db, account.apiUser);
  registerAuth(app, account, authUsers(users));

  registerErrorReplies(app, {
    v1: true,
    mask: (text) => text,
    internal: "internal error of the embedded service; see the service log",
    logger: ctx.logger,
    logMessage: "embedded service request failed",
    logUrl: (request) => request.url,
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, `no such operation: ${request.method} ${request.url.split("?")[0]}`));

  app.options("/*", { config: { public: true } }, async (_request, reply) =>
    reply.code(204).header("Allow", "GET, POST, PATCH, DELETE, OPTIONS").send(),
  );

  ctx.presign.register(app);
  registerItems(app, ctx);
  registerBulk(app, ctx);
  registerExports(app, ctx);
  registerOrders(app, ctx);
  registerLogs(app, ctx);
  registerWebhooks(app, ctx);
  registerV1Orders(app, ctx);
  registerOptions(app, ctx);
  registerProfile(app, ctx, users);
  registerAssets(app, ctx);
  registerV3Reads(app, ctx);
  registerNotInSandbox(app);
  return app;
}
