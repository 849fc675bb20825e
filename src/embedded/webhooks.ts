/**
 * Webhooks, seed part 4.5. The seed shows neither bodies nor answers: an
 * endpoint is `{url, description, event_types, enabled}`; the secret is
 * shown on creation and rotation only; every endpoint answer carries its
 * health over the last 24 hours.
 *
 * @module
 */

import type { FastifyInstance, FastifyReply } from "fastify";
import type { ServiceContext } from "./context.js";
import { badRequest as bad, fields, text, v3Error, wholeNumber } from "../http/envelopes.js";
import { newSecret, type TestResult } from "./webhook-dispatch.js";
import { EVENT_PREFIX, EVENT_TYPES, newId, SUBSCRIBABLE } from "./webhook-events.js";
import type { Delivery, Endpoint } from "./webhook-store.js";

const TEST_WAIT_MS = 5_000;
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const PERIODS: Record<string, number> = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 };

/** Event types are accepted with or without the service prefix of the envelope's `type`. */
function unprefixed(type: string): string {
  return type.startsWith(`${EVENT_PREFIX}.`) ? type.slice(EVENT_PREFIX.length + 1) : type;
}

/** HTTPS, as the seed says; plain HTTP only to this machine, for receivers under test. */
function checkUrl(value: unknown, problems: string[]): string | undefined {
  const raw = text(value)?.trim();
  let url: URL | undefined;
  try {
    url = raw ? new URL(raw) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !(url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname)))) {
    problems.push(`url must be an https:// address (http:// only to localhost), not ${JSON.stringify(raw ?? null)}`);
    return undefined;
  }
  return url.toString();
}

function checkTypes(value: unknown, problems: string[]): string[] | undefined {
  const allowed = [...SUBSCRIBABLE].join(", ");
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string")) {
    problems.push(`event_types must be a non-empty array of event types: ${allowed}`);
    return undefined;
  }
  const types = [...new Set(value.map(unprefixed))];
  for (const t of types) {
    const known = EVENT_TYPES.find((e) => e.type === t);
    if (!known) problems.push(`event_types: ${JSON.stringify(t)} is not an event type; subscribable: ${allowed}`);
    else if (!known.enabled) problems.push(`event_types: ${t} is announced but cannot be subscribed to yet; subscribable: ${allowed}`);
  }
  return types;
}

function since(ctx: ServiceContext, period: string): string {
  // Own keys only: `period=constructor` would find Object's own members.
  const ms = Object.hasOwn(PERIODS, period) ? PERIODS[period] : undefined;
  if (ms === undefined) throw bad(`period must be one of ${Object.keys(PERIODS).join(", ")}, not ${JSON.stringify(period)}`);
  return new Date(ctx.now() - ms).toISOString();
}

function tally(rows: Array<{ event_type: string; status: string; n: number }>): { total: number; success: number; failed: number; pending: number; success_rate: number | null } {
  const sum = (status?: string): number => rows.filter((r) => !status || r.status === status).reduce((a, r) => a + r.n, 0);
  const success = sum("success");
  const failed = sum("failed");
  return { total: sum(), success, failed, pending: sum("pending"), success_rate: success + failed ? Number((success / (success + failed)).toFixed(4)) : null };
}

function view(ctx: ServiceContext, e: Endpoint, withSecret = false): Record<string, unknown> {
  const health = tally(ctx.webhookStore.counts(since(ctx, "24h"), e.id));
  return { id: e.id, url: e.url, description: e.description, event_types: e.eventTypes, enabled: e.enabled, created: e.created, updated: e.updated, health: { period: "24h", ...health }, ...(withSecret ? { secret: e.secret } : {}) };
}

function deliveryView(d: Delivery): Record<string, unknown> {
  return { id: `${d.msgId}_${d.endpointId}`, msg_id: d.msgId, event_type: d.eventType, status: d.status, created: d.created, next_attempt: d.nextAt === null ? null : new Date(d.nextAt).toISOString(), attempts: d.attempts };
}

function time(value: unknown, name: string): string | undefined {
  const t = text(value);
  if (t === undefined || t === "") return undefined;
  const ms = Date.parse(t);
  if (Number.isNaN(ms)) throw bad(`${name} must be an ISO 8601 time, not ${JSON.stringify(t)}`);
  return new Date(ms).toISOString();
}

export function registerWebhooks(app: FastifyInstance, ctx: ServiceContext): void {
  const store = ctx.webhookStore;
  const find = (id: string, reply: FastifyReply): Endpoint | undefined => {
    const e = store.endpoint(id);
    if (!e) void reply.code(404).send(v3Error(`no webhook endpoint ${JSON.stringify(id)}; GET /v3/webhooks/endpoints lists them`));
    return e;
  };
  const stamp = (): string => new Date(ctx.now()).toISOString();

  app.get("/v3/webhooks/event-types", async () => {
    const categories = [...new Set(EVENT_TYPES.map((e) => e.category))];
    return { categories: categories.map((name) => ({ name, event_types: EVENT_TYPES.filter((e) => e.category === name).map(({ type, description, enabled }) => ({ type, description, enabled })) })) };
  });

  app.get("/v3/webhooks/endpoints", async () => {
    const endpoints = store.endpoints().map((e) => view(ctx, e));
    return { count: endpoints.length, endpoints, timestamp: stamp() };
  });

  app.post("/v3/webhooks/endpoints", async (request) => {
    const body = fields(request.body);
    const problems: string[] = [];
    const url = checkUrl(body.url, problems);
    const types = checkTypes(body.event_types, problems);
    if (body.description !== undefined && typeof body.description !== "string") problems.push("description must be a string");
    if (body.enabled !== undefined && typeof body.enabled !== "boolean") problems.push("enabled must be true or false");
    if (problems.length || !url || !types) throw bad(...problems);
    const e: Endpoint = { id: newId("ep"), url, description: typeof body.description === "string" ? body.description : "", eventTypes: types, enabled: body.enabled !== false, secret: newSecret(), created: stamp(), updated: stamp() };
    store.saveEndpoint(e);
    return view(ctx, e, true);
  });

  app.get<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id", async (request, reply) => {
    const e = find(request.params.id, reply);
    return e && view(ctx, e);
  });

  app.patch<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id", async (request, reply) => {
    const e = find(request.params.id, reply);
    if (!e) return reply;
    const body = fields(request.body);
    const problems: string[] = [];
    const unknown = Object.keys(body).filter((k) => !["url", "description", "event_types", "enabled"].includes(k));
    if (unknown.length) problems.push(`unknown fields ${unknown.join(", ")}: an endpoint has url, description, event_types and enabled`);
    const next: Endpoint = { ...e, updated: stamp() };
    if (body.url !== undefined) next.url = checkUrl(body.url, problems) ?? e.url;
    if (body.event_types !== undefined) next.eventTypes = checkTypes(body.event_types, problems) ?? e.eventTypes;
    if (typeof body.description === "string") next.description = body.description;
    else if (body.description !== undefined) problems.push("description must be a string");
    if (typeof body.enabled === "boolean") next.enabled = body.enabled;
    else if (body.enabled !== undefined) problems.push("enabled must be true or false");
    if (problems.length) throw bad(...problems);
    store.saveEndpoint(next);
    return view(ctx, next);
  });

  app.delete<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id", async (request, reply) => {
    if (!find(request.params.id, reply)) return reply;
    store.deleteEndpoint(request.params.id);
    return { id: request.params.id, results: { successful: [{ code: 3, message: "endpoint deleted with its delivery logs" }] } };
  });

  app.post<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id/rotate-secret", async (request, reply) => {
    const e = find(request.params.id, reply);
    if (!e) return reply;
    const next = { ...e, secret: newSecret(), updated: stamp() };
    store.saveEndpoint(next);
    return { id: e.id, secret: next.secret };
  });

  app.get<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id/logs", async (request, reply) => {
    if (!find(request.params.id, reply)) return reply;
    const q = fields(request.query);
    const status = text(q.status);
    if (status && !["pending", "success", "failed"].includes(status)) throw bad(`status must be pending, success or failed, not ${JSON.stringify(status)}`);
    const eventType = text(q.event_type);
    const filter = { status, eventType: eventType && unprefixed(eventType), before: time(q.before, "before"), after: time(q.after, "after"), limit: wholeNumber(text(q.limit), "limit", 1, 250, 50), offset: wholeNumber(text(q.offset), "offset", 0, 1_000_000_000, 0) };
    const { total, deliveries } = store.deliveries(request.params.id, filter);
    return { total, count: deliveries.length, offset: filter.offset, deliveries: deliveries.map(deliveryView) };
  });

  app.post<{ Params: { id: string } }>("/v3/webhooks/endpoints/:id/test", async (request, reply) => {
    const e = find(request.params.id, reply);
    if (!e) return reply;
    const body = fields(request.body);
    const problems: string[] = [];
    const [type = "order.created"] = body.event_type === undefined ? [] : (checkTypes([body.event_type], problems) ?? []);
    const oid = body.oid === undefined ? undefined : Number(text(body.oid));
    const order = oid === undefined ? { oid: 0, fields: { channel: "test", status: "TEST" } } : ctx.orders.get(oid);
    if (!order) problems.push(`oid: no order ${JSON.stringify(body.oid)}; give the oid of an existing order, or leave it out for a test order`);
    if (problems.length || !order) throw bad(...problems);
    const result: TestResult = await ctx.webhooks.test(e, type, order, TEST_WAIT_MS);
    if (result.queued) return { id: result.id, status: "queued", message: `no answer within ${TEST_WAIT_MS / 1000} s: the event was queued; GET /v3/webhooks/endpoints/${e.id}/logs shows its delivery` };
    const a = result.attempt;
    return { id: result.id, status: a.status, http_status: a.http_status, response_time_ms: a.response_time_ms, response_body: a.response_body, ...(a.error ? { error: a.error } : {}) };
  });

  app.post<{ Params: { id: string } }>("/v3/webhooks/deliveries/:id/retry", async (request, reply) => {
    const m = /^(msg_[0-9a-f]+)_(ep_[0-9a-f]+)$/.exec(request.params.id);
    if (!m?.[1] || !m[2]) throw bad(`a delivery id is {msgId}_{endpointId} (msg_…_ep_…), not ${JSON.stringify(request.params.id)}`);
    const result = ctx.webhooks.retry(m[1], m[2]);
    if (result === "missing") return reply.code(404).send(v3Error(`no delivery ${request.params.id}`));
    if (result === "not_failed") return reply.code(409).send(v3Error(`delivery ${request.params.id} has not failed: only a failed delivery is retried by hand; pending ones are retried automatically`));
    return { id: request.params.id, status: "queued", message: "one more attempt is under way" };
  });

  app.get("/v3/webhooks/statistics", async (request) => {
    const period = text(fields(request.query).period) ?? "24h";
    const rows = store.counts(since(ctx, period));
    const byType: Record<string, ReturnType<typeof tally>> = {};
    for (const t of new Set(rows.map((r) => r.event_type))) byType[t] = tally(rows.filter((r) => r.event_type === t));
    return { period, ...tally(rows), by_event_type: byType, timestamp: stamp() };
  });
}
