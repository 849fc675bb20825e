import type { FastifyInstance } from "fastify";
import { HttpError } from "../../http/envelopes.js";
import { accountOf, type ApiContext } from "./context.js";

/** How long a rotation waits for another daemon of the cluster that is checking the endpoints. */
const BUSY_TRIES = 15;
const BUSY_WAIT_MS = 200;

/**
 * `POST /v3/automations/events/rotate-secret` (documented in the README): the
 * account's webhook endpoint gets a new signing secret at the service, which
 * this daemon stores sealed. For a secret that may have leaked: the previous
 * one is accepted only for deliveries signed before the switch, for as long
 * as their timestamp passes (five minutes).
 */
export function registerWebhookSecret(app: FastifyInstance, ctx: ApiContext): void {
  const rotate = ctx.rotateWebhookSecret;
  if (!rotate) return;
  app.post("/v3/automations/events/rotate-secret", async (request) => {
    const account = accountOf(request);
    for (let attempt = 1; ; attempt++) {
      const done = await rotate(account).catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        // The service may have rotated before the failure here: only another rotation brings the two back in step.
        throw new HttpError(502, `rotating the webhook endpoint's secret failed: ${why}; send the request again (until one succeeds, deliveries may be refused)`);
      });
      if (done === null) throw new HttpError(404, `account ${account} has no webhook endpoint: none of its automations runs on events (add "events" to one, and the daemon registers an endpoint)`);
      if (done !== "busy") return { result: "success", message: "webhook signing secret rotated; deliveries signed with the previous one are accepted for 5 minutes", endpoint: done.endpoint };
      if (attempt >= BUSY_TRIES) throw new HttpError(409, "another daemon of the cluster is checking the webhook endpoints; try again in a few seconds");
      await new Promise((resolve) => setTimeout(resolve, BUSY_WAIT_MS));
    }
  });
}
