import type { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";
import type { Logger } from "../log.js";
import type { RetryPolicy } from "../retry.js";
import { registerSecret } from "../secrets.js";
import * as bulk from "./bulk.js";
import * as exporting from "./exports.js";
import { HttpTransport, newCounter, type RequestCounter, type ServiceCaller, type ServiceRequest, type ServiceResponse } from "./http.js";
import * as items from "./items.js";
import { sharedLimiter, type RateLimiter } from "./limiter.js";
import * as logs from "./logs.js";
import * as orders from "./orders.js";
import { asRecord, v1Failure } from "./response.js";
import * as webhooks from "./webhooks.js";

export interface ServiceClientOptions {
  baseUrl: string;
  apiUser: string;
  apiToken: string;
  /** `X-Auth-Integration`: the worker's partner identifier, not a credential. */
  integration?: string;
  /** Defaults to the process-wide limiter, so every client of an account shares its budget. */
  limiter?: RateLimiter;
  logger?: Logger;
  counter?: RequestCounter;
  retry?: Partial<Pick<RetryPolicy, "attempts" | "baseDelayMs" | "maxDelayMs">>;
}

/**
 * The typed client of the commerce service (v1 items, bulk and exports, v3
 * orders, v1 and v3 logs). One client per account; `withCounter` gives each
 * run a view that counts its own requests while sharing the limiter.
 */
export class ServiceClient implements ServiceCaller {
  readonly counter: RequestCounter;
  private readonly transport: HttpTransport;

  /** A client from settings, or (for `withCounter`) a view on another client's transport. */
  constructor(options: ServiceClientOptions | { transport: HttpTransport; counter: RequestCounter }) {
    if ("transport" in options) {
      this.transport = options.transport;
      this.counter = options.counter;
      return;
    }
    this.transport = new HttpTransport({
      baseUrl: options.baseUrl,
      apiUser: options.apiUser,
      apiToken: options.apiToken,
      integration: options.integration,
      limiter: options.limiter ?? sharedLimiter(),
      logger: options.logger,
      retry: options.retry,
    });
    this.counter = options.counter ?? newCounter();
  }

  /** A view for one run: same connection pool and budget, its own request counter. */
  withCounter(counter: RequestCounter): ServiceClient {
    return new ServiceClient({ transport: this.transport, counter });
  }

  get account(): string {
    return this.transport.account;
  }

  get limiter(): RateLimiter {
    return this.transport.limiter;
  }

  send(req: ServiceRequest): Promise<ServiceResponse> {
    return this.transport.send(req, this.counter);
  }

  open(url: string, signal?: AbortSignal): Promise<Readable> {
    return this.transport.open(url, this.counter, signal);
  }

  // v1 authentication (part 4.1)

  /** `POST /v1/auth`: exchanges a user and password for a token (registered as a secret at once). */
  async login(user: string, pass: string, signal?: AbortSignal): Promise<string> {
    registerSecret(pass);
    const res = await this.send({ method: "POST", path: "/v1/auth", json: { user, pass }, idempotent: true, signal });
    const failure = v1Failure({ method: "POST", path: "/v1/auth" }, res.body);
    if (failure) throw failure;
    const token = asRecord(res.body).token;
    if (typeof token !== "string" || !token) {
      throw new ConveyorError("auth", "POST /v1/auth answered without a token", { hint: "Check the user name and password." });
    }
    registerSecret(token);
    return token;
  }

  /** `GET /v1/auth`: validates the configured pair and returns the profile (`role`, `userid`, `userpk`). */
  async profile(signal?: AbortSignal): Promise<Record<string, unknown>> {
    const res = await this.send({ method: "GET", path: "/v1/auth", signal });
    const failure = v1Failure({ method: "GET", path: "/v1/auth" }, res.body);
    if (failure) throw failure;
    return asRecord(res.body);
  }

  // v1 items (part 4.2)

  searchItems(query: string, page?: number, signal?: AbortSignal): Promise<items.ItemPage> {
    return items.searchItems(this, query, page, signal);
  }
  listItems(options?: { page?: number; sort?: string; signal?: AbortSignal }): Promise<items.ItemPage> {
    return items.listItems(this, options);
  }
  pageItems(options?: { query?: string; sort?: string; signal?: AbortSignal }): AsyncGenerator<items.Item[]> {
    return items.pageItems(this, options);
  }
  getItem(by: { guid: string } | { sku: string }, signal?: AbortSignal): Promise<items.Item | null> {
    return items.getItem(this, by, signal);
  }
  getItemById(id: number | string, signal?: AbortSignal): Promise<items.Item | null> {
    return items.getItemById(this, id, signal);
  }
  itemAction(action: items.ItemAction, guid: string, fields?: Record<string, string>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return items.itemAction(this, action, guid, fields, signal);
  }

  // v1 bulk (part 4.5)

  submitBulk(filePath: string, options: bulk.SubmitOptions): Promise<bulk.BulkSubmitted> {
    return bulk.submitBulk(this, filePath, options);
  }
  bulkStatus(bulkFile: string, signal?: AbortSignal): Promise<bulk.BulkStatus> {
    const path = `/v1/bulk/results/${encodeURIComponent(bulkFile)}`;
    return this.send({ method: "GET", path, signal }).then((res) => bulk.bulkStatusOf(res.body, { method: "GET", path }));
  }
  waitBulk(bulkFile: string, options?: bulk.WaitOptions): Promise<bulk.BulkStatus> {
    return bulk.waitBulk(this, bulkFile, options);
  }
  bulkResultRows(url: string, signal?: AbortSignal): AsyncGenerator<bulk.BulkResultRow> {
    return bulk.bulkResultRows(this, url, signal);
  }
  bulkJobs(date: string, signal?: AbortSignal): Promise<bulk.BulkJob[]> {
    return bulk.bulkJobs(this, date, signal);
  }
  cancelBulk(jobId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    return bulk.cancelBulk(this, jobId, signal);
  }

  // v1 bulk exports (part 4.5)

  requestExport(req: exporting.ExportRequest): Promise<{ bulk_file: string }> {
    return exporting.requestExport(this, req);
  }
  exportStatus(bulkFile: string, signal?: AbortSignal): Promise<exporting.ExportStatus> {
    return exporting.exportStatus(this, bulkFile, signal);
  }
  waitExport(bulkFile: string, options?: bulk.WaitOptions): Promise<string> {
    return exporting.waitExport(this, bulkFile, options);
  }
  exportRows(url: string, signal?: AbortSignal): AsyncGenerator<Record<string, string>> {
    return exporting.exportRows(this, url, signal);
  }
  exportRecords(req: exporting.ExportRequest, options?: bulk.WaitOptions): AsyncGenerator<Record<string, string>> {
    return exporting.exportRecords(this, req, options);
  }
  exportRecordPages(req: exporting.ExportRequest, options?: bulk.WaitOptions): AsyncGenerator<Array<Record<string, string>>> {
    return exporting.exportRecordPages(this, req, options);
  }

  // v3 orders (part 4.3)

  createOrder(order: orders.Order, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.createOrder(this, order, signal);
  }
  createOrders(body: orders.OrderBulk, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.createOrders(this, body, signal);
  }
  listOrders(query?: orders.OrderQuery): Promise<orders.OrderList> {
    return orders.listOrders(this, query);
  }
  pageOrders(query?: Omit<orders.OrderQuery, "page">): AsyncGenerator<orders.Order[]> {
    return orders.pageOrders(this, query);
  }
  getOrder(oid: string | number, signal?: AbortSignal): Promise<orders.Order | null> {
    return orders.getOrder(this, oid, signal);
  }
  updateOrder(oid: string | number, fields: orders.Order, options?: { idempotent?: boolean; signal?: AbortSignal }): Promise<orders.MutationResult> {
    return orders.updateOrder(this, oid, fields, options);
  }
  updateOrders(body: orders.OrderBulk, options?: { idempotent?: boolean; signal?: AbortSignal }): Promise<orders.MutationResult> {
    return orders.updateOrders(this, body, options);
  }
  archiveOrder(oid: string | number, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.archiveOrder(this, oid, signal);
  }
  archiveOrders(body: orders.OrderBulk, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.archiveOrders(this, body, signal);
  }
  combineOrders(fields: orders.Order & { oid: string | number }, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.consolidateOrders(this, "combine", fields, signal);
  }
  splitOrder(fields: orders.Order & { oid: string | number }, signal?: AbortSignal): Promise<orders.MutationResult> {
    return orders.consolidateOrders(this, "split", fields, signal);
  }

  // v3 webhooks (part 4.5)

  createWebhookEndpoint(input: webhooks.EndpointInput, signal?: AbortSignal): Promise<webhooks.WebhookEndpoint & { secret: string }> {
    return webhooks.createEndpoint(this, input, signal);
  }
  getWebhookEndpoint(id: string, signal?: AbortSignal): Promise<webhooks.WebhookEndpoint | null> {
    return webhooks.getEndpoint(this, id, signal);
  }
  updateWebhookEndpoint(id: string, patch: Partial<webhooks.EndpointInput>, signal?: AbortSignal): Promise<webhooks.WebhookEndpoint> {
    return webhooks.updateEndpoint(this, id, patch, signal);
  }
  deleteWebhookEndpoint(id: string, signal?: AbortSignal): Promise<void> {
    return webhooks.deleteEndpoint(this, id, signal);
  }
  rotateWebhookSecret(id: string, signal?: AbortSignal): Promise<string> {
    return webhooks.rotateSecret(this, id, signal);
  }

  // logs (v3 part 4.4, v1 part 4.6)

  searchLogs(search: logs.LogSearch, signal?: AbortSignal): Promise<logs.LogPage> {
    return logs.searchLogs(this, search, signal);
  }
  searchLogsV1(search: logs.LogSearch, signal?: AbortSignal): Promise<logs.LogPage> {
    return logs.searchLogsV1(this, search, signal);
  }
}
