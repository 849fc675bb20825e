import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { apiSource, type ServiceContext } from "./context.js";
import { fields, HttpError, validationFailure, v3Error, type FailedEntry } from "../http/envelopes.js";
import type { ChangeSource } from "./log-store.js";
import { str, type Body } from "./order-model.js";
import { archiveOrder, createOrder, updateOrder, type OpResult } from "./order-ops.js";
import { combineOrders, splitOrder } from "./order-consolidate.js";
import { groupRows, isBulkBody } from "./order-rows.js";
import { listOrders } from "./order-list.js";
import { orderView } from "./order-model.js";
import { pathShortcut } from "./query.js";

const CODES = { create: 1, update: 2, delete: 3 } as const;
type Kind = keyof typeof CODES;

function single(reply: FastifyReply, kind: Kind, result: OpResult): unknown {
  if (!result.ok) {
    if (result.status === 404) return reply.code(404).send(v3Error(result.problems.join("; ")));
    return reply.code(result.status).send(validationFailure(result.problems));
  }
  const successful = [{ code: CODES[kind], message: result.message }];
  // Create answers carry `oid` as a number; update and delete `id` as a string (part 2.1).
  return kind === "create" ? { oid: result.oid, results: { successful } } : { id: String(result.oid), results: { successful } };
}

/**
 * A `{header, data}` body: one operation per order the rows build. Good
 * orders go through even when others fail; the answer lists both, `failed`
 * keyed by the order's index in the request. Nothing succeeded: 400.
 */
function bulk(reply: FastifyReply, kind: Kind, body: { header: unknown[]; data: unknown[] }, pathId: string | undefined, run: (id: string | undefined, body: Body) => OpResult): unknown {
  const { groups, problems } = groupRows(body.header, body.data, pathId);
  if (problems.length) return reply.code(400).send(validationFailure(problems));
  if (groups.length === 0) return reply.code(400).send(validationFailure(["data is empty: give one row per order (or per line)"]));
  const successful: Record<string, unknown>[] = [];
  const failed: Record<string, FailedEntry> = {};
  for (const group of groups) {
    const id = kind === "create" ? undefined : str(group.body.oid) || str(group.body.order) || pathId;
    if (kind !== "create" && !id) {
      failed[String(group.index)] = { message: `rows ${group.rows.join(", ")}: no oid or order column names the order`, code: 1 };
      continue;
    }
    const rowBody = { ...group.body };
    if (kind !== "create") {
      delete rowBody.oid;
      delete rowBody.order;
    }
    const result = run(id, rowBody);
    if (result.ok) successful.push({ code: CODES[kind], message: result.message, ...(kind === "create" ? { oid: result.oid } : { id: String(result.oid) }) });
    else failed[String(group.index)] = { message: `rows ${group.rows.join(", ")}: ${result.problems.join("; ")}`, code: 1 };
  }
  if (successful.length === 0) return reply.code(400).send({ results: { failed } });
  const first = successful[0] as Record<string, unknown>;
  const head = kind === "create" ? { oid: first.oid } : { id: first.id };
  return { ...head, results: { successful, ...(Object.keys(failed).length ? { failed } : {}) } };
}

const STATUS_SEGMENTS = new Set(["incomplete", "ready", "pending", "ordered", "dropshipped", "canceled", "refunded", "complete", "archived", "shipped", "paid"]);

export function registerOrders(app: FastifyInstance, ctx: ServiceContext): void {
  const source = (request: FastifyRequest): ChangeSource => apiSource(request);

  app.post("/v3/orders", async (request, reply) => {
    const body = request.body;
    const src = source(request);
    if (isBulkBody(body)) return bulk(reply, "create", body, undefined, (_id, b) => createOrder(ctx, b, src));
    return single(reply, "create", createOrder(ctx, fields(body), src));
  });

  app.get("/v3/orders", async (request) => listOrders(ctx, fields(request.query)));

  app.get<{ Params: { id: string } }>("/v3/orders/:id", async (request, reply) => {
    const id = request.params.id;
    const query = fields(request.query);
    if (/^\d+$/.test(id)) {
      const order = ctx.orders.get(Number(id));
      if (!order) return reply.code(404).send(v3Error(`no order with oid ${id}`));
      return { count: "1", timestamp: new Date(ctx.now()).toISOString(), orders: [orderView(order)] };
    }
    if (id === "lineitem") return listOrders(ctx, query, { lineitem: true });
    if (STATUS_SEGMENTS.has(id.toLowerCase())) return listOrders(ctx, query, { pathSearch: pathShortcut(id) ?? `status:=${id.toUpperCase()}` });
    const order = ctx.orders.byOrder(id);
    if (order) return { count: "1", timestamp: new Date(ctx.now()).toISOString(), orders: [orderView(order)] };
    // Neither an oid nor a known order: the segment is a channel.
    return listOrders(ctx, query, { pathSearch: pathShortcut(id) ?? `channel:=${JSON.stringify(id)}` });
  });

  const mutate = (kind: "update" | "delete") => async (request: FastifyRequest<{ Params: { id?: string } }>, reply: FastifyReply) => {
    const body = request.body;
    const src = source(request);
    const pathId = request.params.id;
    const run = (id: string | undefined, b: Body): OpResult =>
      kind === "update" ? updateOrder(ctx, id ?? "", b, src) : archiveOrder(ctx, id ?? "", b, src);
    if (isBulkBody(body)) return bulk(reply, kind, body, pathId, run);
    const b = fields(body);
    const id = pathId ?? (str(b.oid) || str(b.order));
    if (!id) throw new HttpError(400, "name the order: PATCH/DELETE /v3/orders/{oid}, or oid in the body", ["name the order: /v3/orders/{oid} or oid in the body"]);
    return single(reply, kind, run(id, b));
  };
  app.patch<{ Params: { id?: string } }>("/v3/orders/:id", mutate("update"));
  app.patch<{ Params: { id?: string } }>("/v3/orders", mutate("update"));
  app.delete<{ Params: { id?: string } }>("/v3/orders/:id", mutate("delete"));
  app.delete<{ Params: { id?: string } }>("/v3/orders", mutate("delete"));

  app.post("/v3/orders/combine", async (request, reply) => {
    const result = combineOrders(ctx, fields(request.body), source(request));
    if (!result.ok) return reply.code(result.status).send(result.status === 404 ? v3Error(result.problems.join("; ")) : validationFailure(result.problems));
    return { id: String(result.oid), results: { successful: [{ code: CODES.update, message: result.message }] } };
  });

  app.post("/v3/orders/split", async (request, reply) => {
    const result = splitOrder(ctx, fields(request.body), source(request));
    if (!result.ok) return reply.code(result.status).send(result.status === 404 ? v3Error(result.problems.join("; ")) : validationFailure(result.problems));
    return {
      id: String(result.oid),
      oids: result.created,
      results: { successful: result.created.map((oid) => ({ code: CODES.create, message: `order ${oid} created by the split of ${result.oid}`, oid })) },
    };
  });
}
