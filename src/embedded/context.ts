import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Logger } from "../log.js";
import type { Db, ServicePaths } from "./db.js";
import type { ItemStore } from "./item-store.js";
import type { ChangeSource, LogStore } from "./log-store.js";
import type { OrderStore } from "./order-store.js";
import type { Presigner } from "./presign.js";
import type { BulkQueue } from "./bulk-worker.js";
import type { ExportRunner } from "./export-writer.js";
import { text } from "../http/envelopes.js";
import type { WebhookDispatcher } from "./webhook-dispatch.js";
import type { WebhookStore } from "./webhook-store.js";

/** What every route module of the embedded service shares. */
export interface ServiceContext {
  db: Db;
  paths: ServicePaths;
  items: ItemStore;
  orders: OrderStore;
  logs: LogStore;
  presign: Presigner;
  bulk: BulkQueue;
  exports: ExportRunner;
  webhookStore: WebhookStore;
  webhooks: WebhookDispatcher;
  logger: Logger;
  now(): number;
}

/** The change source of a single API call: its own request id, no job. */
export function apiSource(request: FastifyRequest): ChangeSource {
  return { method: "api", requestId: randomUUID(), jobId: "", integration: text(request.headers["x-auth-integration"]) ?? "" };
}
