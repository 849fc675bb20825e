/** The service client's public surface: what the pipeline and the daemon import. */
export { ServiceClient, type ServiceClientOptions } from "./client.js";
export { HttpTransport, newCounter, rateClass, serviceAgent, type RequestCounter, type ServiceCaller, type ServiceRequest, type ServiceResponse } from "./http.js";
export { TokenBucketLimiter, sharedLimiter, SEED_LIMITS, type RateLimiter, type RateClass, type RateLimits, type RateLimitHeaders } from "./limiter.js";
export type { Item, ItemPage, ItemAction } from "./items.js";
export type { BulkSubmitted, BulkStatus, BulkState, BulkResultRow, BulkJob, SubmitOptions, WaitOptions } from "./bulk.js";
export { fileSha256, mayHaveReached } from "./bulk.js";
export type { ExportRequest, ExportStatus } from "./exports.js";
export type { Order, OrderBulk, OrderQuery, OrderList, MutationResult } from "./orders.js";
export type { LogSearch, LogRecord, LogPage } from "./logs.js";
export { isMissingRecord, serviceMessage } from "./response.js";
export { csvRowPages } from "./csv.js";
export type { EndpointInput, WebhookEndpoint } from "./webhooks.js";
