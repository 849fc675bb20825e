import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isV1, unixTime } from "../http/envelopes.js";

/**
 * The parts of the seeds that need a marketplace, a carrier or a platform
 * behind the service answer one envelope: 501 (the operation exists, the
 * sandbox does not implement it), `result` failure (v1) or error (v3), and a
 * message saying why and what to do instead. Never a 404 that looks like a
 * typo, never a fake success.
 */
export function notInSandbox(request: FastifyRequest, reply: FastifyReply, why: string): FastifyReply {
  const message = `not in the sandbox: ${request.method} ${request.url.split("?")[0]} ${why}; run it against the live service`;
  return reply.code(501).send(isV1(request) ? { result: "failure", message, sandbox: true, time: unixTime() } : { result: "error", message, sandbox: true });
}

const MARKETPLACE = "needs a marketplace, and the sandbox has no marketplace behind it";

const ROUTES: ReadonlyArray<readonly [methods: string[], url: string, why: string]> = [
  [["POST"], "/v1/taxonomy/*", MARKETPLACE],
  [["POST"], "/v1/fitment/*", MARKETPLACE],
  [["POST"], "/v3/fitment/load", MARKETPLACE],
  [["GET", "POST", "PUT", "DELETE"], "/v3/channel/:channel/:aspect/:function", "dispatches to a channel integration, and the sandbox has none"],
  [["GET", "POST"], "/v3/authorize/*", "authorizes a channel plugin, and the sandbox has no channel integrations"],
  [["GET"], "/v3/internal/*", MARKETPLACE],
  [["GET", "POST"], "/v3/shipping/*", "needs a carrier account, and the sandbox has no carrier behind it"],
  [["POST"], "/v3/register", "creates a live account; the sandbox has its one account"],
  [["POST"], "/v3/register/verify", "verifies a live account; the sandbox has its one account"],
  [["GET", "POST"], "/v1/auth/forgot", "resets a password by mail; the sandbox has no password (sign in with the API token) and sends no mail"],
  [["GET", "POST"], "/v1/auth/assist", "asks the live service's support; the sandbox has none"],
  [["DELETE"], "/v3/account", "would delete the account; to start the sandbox afresh, stop it and remove its data folder"],
];

export function registerNotInSandbox(app: FastifyInstance): void {
  for (const [methods, url, why] of ROUTES) {
    const isPublic = url.startsWith("/v3/register");
    app.route({ method: methods, url, config: { public: isPublic }, handler: async (request, reply) => notInSandbox(request, reply, why) });
  }
}
