import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendError, text } from "../http/envelopes.js";
import type { Logger } from "../log.js";
import type { Coalescer } from "./coalescer.js";
import { parseEnvelope } from "./envelope.js";
import { INTAKE_PATH } from "./registration.js";
import { verifySignature } from "./signature.js";
import type { EventStore } from "./store.js";
import type { Subscriptions } from "./subscriptions.js";

/** The largest delivery taken: an order event's envelope is a few hundred bytes. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

export type WebhookResult = "accepted" | "duplicate" | "unknown_key" | "bad_signature" | "stale" | "malformed" | "too_large" | "error";

export interface IntakeDeps {
  secretsFor(key: string): Promise<{ account: string; secrets: string[] } | null>;
  subscriptions: Pick<Subscriptions, "automationsFor">;
  store: Pick<EventStore, "record">;
  coalescer: Pick<Coalescer, "arm">;
  metrics: { observeWebhook(result: WebhookResult): void };
  logger: Logger;
  now: () => number;
}

/** True for the intake's paths: they carry no X-Auth headers (the signature is the proof) and are not throttled per address. */
export function isIntakePath(url: string): boolean {
  return url.startsWith(INTAKE_PATH);
}

/** Answers a refusal, counted once by the route, not again by the scope's onResponse hook. */
const counted = new WeakSet<FastifyRequest>();

function refuse(request: FastifyRequest, reply: FastifyReply, deps: IntakeDeps, result: WebhookResult, status: number, message: string): FastifyReply {
  counted.add(request);
  deps.metrics.observeWebhook(result);
  return sendError(request, reply, status, message);
}

/**
 * `POST /v3/events/webhook/{key}`: the service's deliveries. The body is kept
 * as the bytes that arrived (the signature is over them), checked against the
 * registration's secrets, then the event and its claims are written in one
 * transaction before the 2xx, so an answered event is never lost and a
 * repeated one (same Webhook-Id or event id) is answered 2xx and dropped.
 * Nothing refused is stored or run; every answer is counted in /metrics.
 */
export function registerIntake(app: FastifyInstance, deps: IntakeDeps): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    scope.addHook("onResponse", async (request, reply) => {
      if (counted.has(request)) return;
      const status = reply.statusCode;
      deps.metrics.observeWebhook(status === 413 ? "too_large" : status >= 500 ? "error" : status < 300 ? "accepted" : "malformed");
    });

    scope.post<{ Params: { key: string } }>(`${INTAKE_PATH}:key`, { bodyLimit: MAX_WEBHOOK_BYTES }, async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const registered = await deps.secretsFor(request.params.key);
      if (!registered) return refuse(request, reply, deps, "unknown_key", 404, "no webhook endpoint is registered at this address; the daemon registers its own and gives the service their addresses");
      const headers = { id: text(request.headers["webhook-id"]), timestamp: text(request.headers["webhook-timestamp"]), signature: text(request.headers["webhook-signature"]) };
      const verdict = verifySignature(body, headers, registered.secrets, deps.now());
      if (!("ok" in verdict)) {
        const [result, status]: [WebhookResult, number] = verdict.reason === "mismatch" ? ["bad_signature", 401] : verdict.reason === "stale" ? ["stale", 400] : ["malformed", 400];
        deps.logger.warn({ event: "webhook_refused", account: registered.account, result, webhook_id: headers.id ?? null }, `webhook refused: ${verdict.message}`);
        return refuse(request, reply, deps, result, status, verdict.message);
      }
      const event = parseEnvelope(body);
      if ("problem" in event) return refuse(request, reply, deps, "malformed", 400, event.problem);
      const automations = deps.subscriptions.automationsFor(registered.account, event.type);
      const stored = await deps.store.record(
        { account: registered.account, eventId: event.id, webhookId: headers.id ?? "", type: event.type, orderId: event.orderId, body: body.toString("utf8") },
        automations,
      );
      counted.add(request);
      deps.metrics.observeWebhook(stored ? "accepted" : "duplicate");
      if (!stored) return reply.code(200).send({ status: "duplicate", id: event.id, message: "this event was received before; it is not run again" });
      if (automations.length > 0) deps.coalescer.arm(automations);
      return reply.code(200).send({ status: "accepted", id: event.id });
    });
  });
}
