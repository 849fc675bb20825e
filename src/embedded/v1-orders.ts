import type { FastifyInstance, FastifyRequest } from "fastify";
import { apiSource, type ServiceContext } from "./context.js";
import { HttpError, text, unixTime, v1Failure } from "../http/envelopes.js";
import { readFields } from "./form.js";
import { orderView, str, type Body } from "./order-model.js";
import { createOrder, updateOrder, type OpResult } from "./order-ops.js";
import { matchOrder } from "./order-search.js";
import { ORDER_SORT_KEYS } from "./order-store.js";
import { andQuery, compileQuery } from "./query.js";
import { searchFromUrl } from "./search-path.js";
import { renderInvoice } from "./invoice.js";

/** v1 order listings: pages of 50, as the item listings (service.md). */
export const V1_ORDERS_PAGE_SIZE = 50;

/**
 * The listing states of v1 part 4.3 as searches over the v3 orders (the seed
 * names them only): shipped = shipping complete; awaiting = not yet shipped;
 * packing = paid and not yet shipped. Archived orders are in `all` only.
 */
export const V1_ORDER_STATES: Readonly<Record<string, string>> = {
  all: "",
  shipped: "shippingstatus:=COMPLETE",
  awaiting: "shippingstatus:!=COMPLETE archived:=0",
  packing: "paymentstatus:=COMPLETE shippingstatus:!=COMPLETE archived:=0",
};

function parseSort(value: unknown): { key: string; descending: boolean } {
  const t = text(value)?.trim() ?? "";
  if (t === "") return { key: "oid", descending: false };
  const descending = t.endsWith("_");
  const key = descending ? t.slice(0, -1) : t;
  if (!(ORDER_SORT_KEYS as readonly string[]).includes(key)) {
    throw new HttpError(400, `cannot sort orders by ${JSON.stringify(key)}: sortable fields are ${ORDER_SORT_KEYS.join(", ")} (append _ for descending)`);
  }
  return { key, descending };
}

/** A page of orders keyed by ordinal, with `all` and `time`, as the v1 item listings. */
export function listV1Orders(ctx: ServiceContext, query: Record<string, unknown>, search: string): Record<string, unknown> {
  const pageText = text(query.page)?.trim() || "1";
  if (!/^\d+$/.test(pageText) || Number(pageText) < 1) throw new HttpError(400, `page must be a whole number 1 or greater, not ${JSON.stringify(pageText)}`);
  const first = (Number(pageText) - 1) * V1_ORDERS_PAGE_SIZE;
  const { key, descending } = parseSort(query.sort);
  const matches = compileQuery(andQuery(search, text(query.q)));
  const out: Record<string, unknown> = {};
  let all = 0;
  for (const order of ctx.orders.sorted(key, descending)) {
    if (!matchOrder(order, matches, false)) continue;
    all += 1;
    if (all > first && all <= first + V1_ORDERS_PAGE_SIZE) out[String(all)] = orderView(order);
  }
  return { ...out, all, time: unixTime(ctx.now()) };
}

/**
 * v1 fulfils with flat fields (carrier, tracking number, ship date): they
 * become one shipment of the v3 order, and the order is marked shipped
 * unless the body says otherwise.
 */
export function v1Fulfilment(body: Body): Body {
  const tracking = str(body.shiptracking).trim();
  if (!tracking || body.shipments !== undefined) return body;
  const shipment: Record<string, string> = { shiptracking: tracking };
  for (const f of ["shipcarrier", "shipdate", "shipservice", "shipcost"]) if (body[f] !== undefined) shipment[f] = str(body[f]);
  const rest: Body = { ...body, shipments: [shipment] };
  for (const f of ["shiptracking", "shipcarrier", "shipdate", "shipservice", "shipcost"]) delete rest[f];
  if (rest.shippingstatus === undefined) rest.shippingstatus = "COMPLETE";
  return rest;
}

function answer(ctx: ServiceContext, result: OpResult): Record<string, unknown> {
  // A refused write is HTTP 200 with the failure envelope, as the v1 item writes: v1 callers read `result`.
  if (!result.ok) return v1Failure(result.problems.join("; "), ctx.now());
  const order = ctx.orders.get(result.oid);
  return { result: "success", message: result.message, oid: result.oid, order: order?.fields.order ?? "", time: unixTime(ctx.now()) };
}

export function registerV1Orders(app: FastifyInstance, ctx: ServiceContext): void {
  app.get<{ Params: { state: string } }>("/v1/orders/:state", async (request) => {
    const search = V1_ORDER_STATES[request.params.state];
    if (search === undefined) throw new HttpError(404, `no order listing ${JSON.stringify(request.params.state)}: use one of ${Object.keys(V1_ORDER_STATES).join(", ")}`);
    return listV1Orders(ctx, request.query as Record<string, unknown>, search);
  });

  const search = (request: FastifyRequest): Record<string, unknown> =>
    listV1Orders(ctx, request.query as Record<string, unknown>, searchFromUrl(request.url, "/v1/search/orders"));
  app.get("/v1/search/orders", search);
  app.get("/v1/search/orders/*", search);

  app.post("/v1/orders/add", async (request) => answer(ctx, createOrder(ctx, await readFields(request), apiSource(request))));

  const edit = async (request: FastifyRequest<{ Params: { id?: string } }>): Promise<Record<string, unknown>> => {
    const body = await readFields(request);
    const id = request.params.id ?? (str(body.oid) || str(body.order));
    if (!id) throw new HttpError(400, "name the order: oid or order in the body, or POST /v1/orders/edit/{oid or order}");
    const rest = { ...body };
    delete rest.oid;
    delete rest.order;
    return answer(ctx, updateOrder(ctx, id, v1Fulfilment(rest), apiSource(request)));
  };
  app.post("/v1/orders/edit", edit);
  app.post<{ Params: { id?: string } }>("/v1/orders/edit/:id", edit);

  // An unknown order is HTTP 200 with the failure envelope, as the invoice (v1 part 7): callers read `result`.
  app.get<{ Params: { id: string } }>("/v1/orders/edit/:id", async (request) => {
    const order = ctx.orders.resolve(request.params.id);
    if (!order) return v1Failure(`no order ${JSON.stringify(request.params.id)}: give its oid or its channel order number`, ctx.now());
    return orderView(order);
  });

  app.get<{ Params: { order: string } }>("/v1/orders/invoice/:order", async (request) => {
    const order = ctx.orders.resolve(request.params.order);
    if (!order) return v1Failure(`no order ${JSON.stringify(request.params.order)} to invoice`, ctx.now());
    const view = orderView(order);
    return { result: "success", invoice: renderInvoice(view), order: view, time: unixTime(ctx.now()) };
  });
}
