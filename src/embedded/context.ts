import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { ChangeSource } from "./log-store.js";
import type { BulkQueue } from "./bulk-worker.js";
import type { ExportRunner } from "./export-writer.js";
import { text } from "../http/envelopes.js";
import type { WebhookDispatcher } from "./webhook-dispatch.js";
import type { WebhookStore } from "./webhook-store.js";
import type { ServiceCore } from "./service-core.js";

/** What every route module of the embedded service shares. */
export interface ServiceContext extends ServiceCore {
  bulk: BulkQueue;
  exports: ExportRunner;
  webhookStore: WebhookStore;
  webhooks: WebhookDispatcher;
}

/** The change source of a single API call: its own request id, no job. */
export function apiSource(request: FastifyRequest): ChangeSource {
  return { method: "api", requestId: randomUUID(), jobId: "", integration: text(request.headers["x-auth-integration"]) ?? "" };
}
