import { ConveyorError } from "../errors.js";
import type { ServiceCaller } from "./http.js";
import { asRecord, isRecord, serviceMessage } from "./response.js";

/** An order as read (seed v3 part 2.3); fields vary by channel, so it stays an open record. */
export type Order = Record<string, unknown> & { oid?: string | number; order?: string };

/** `{header:[columns], data:[rows]}`: the bulk shape of create, update and archive. */
export interface OrderBulk {
  header: string[];
  data: unknown[][];
}

export interface MutationResult {
  /** `oid` of a created order (number), `id` of others. */
  oid?: number;
  id?: string;
  successful: { code: number; message: string }[];
  /** Rows the service refused, by their index in the request. */
  failed: { index: number; code: number; message: string }[];
}

export interface OrderQuery {
  page?: number;
  sort?: string;
  sortorder?: "asc" | "desc";
  /** Search expression (search.md), e.g. `archived:=0`. */
  q?: string;
  lineitem?: boolean;
  lineitem_filter?: boolean;
  /** A path form of part 4.3: a status, `shipped`, `paid`, `lineitem` or a channel. */
  shortcut?: string;
  signal?: AbortSignal;
}

export interface OrderList {
  count: number;
  timestamp: string;
  orders: Order[];
}

export function mutationOf(body: unknown): MutationResult {
  const record = asRecord(body);
  const results = asRecord(record.results);
  const successful = Array.isArray(results.successful)
    ? results.successful.filter(isRecord).map((s) => ({ code: Number(s.code), message: String(s.message ?? "") }))
    : [];
  const failed = isRecord(results.failed)
    ? Object.entries(results.failed).map(([index, entry]) => ({
        index: Number(index),
        code: Number(asRecord(entry).code),
        message: String(asRecord(entry).message ?? ""),
      }))
    : [];
  const out: MutationResult = { successful, failed };
  if (record.oid !== undefined && Number.isFinite(Number(record.oid))) out.oid = Number(record.oid);
  if (record.id !== undefined) out.id = String(record.id);
  return out;
}

/** A single-order mutation either worked or is an error naming the service's reason. */
function single(method: string, path: string, body: unknown): MutationResult {
  const result = mutationOf(body);
  if (result.failed.length && !result.successful.length) {
    throw new ConveyorError("service_rejected", `${method} ${path} was refused by the service: ${serviceMessage(body)}`, {
      details: { method, path, codes: result.failed.map((f) => f.code) },
    });
  }
  return result;
}

function orderPath(oid: string | number): string {
  return `/v3/orders/${encodeURIComponent(String(oid))}`;
}

export async function createOrder(caller: ServiceCaller, order: Order, signal?: AbortSignal): Promise<MutationResult> {
  const res = await caller.send({ method: "POST", path: "/v3/orders", json: order, signal });
  return single("POST", "/v3/orders", res.body);
}

/** Bulk create: refused rows come back in `failed`, the others are created. Never repeated blindly. */
export async function createOrders(caller: ServiceCaller, bulk: OrderBulk, signal?: AbortSignal): Promise<MutationResult> {
  const res = await caller.send({ method: "POST", path: "/v3/orders", json: bulk, signal });
  return mutationOf(res.body);
}

export async function listOrders(caller: ServiceCaller, query: OrderQuery = {}): Promise<OrderList> {
  const path = query.shortcut ? orderPath(query.shortcut) : "/v3/orders";
  const flag = (value: boolean | undefined): string | undefined => (value === undefined ? undefined : value ? "true" : "false");
  const res = await caller.send({
    method: "GET",
    path,
    query: {
      page: query.page,
      sort: query.sort,
      sortorder: query.sortorder,
      q: query.q,
      lineitem: flag(query.lineitem),
      lineitem_filter: flag(query.lineitem_filter),
    },
    signal: query.signal,
  });
  const body = asRecord(res.body);
  const orders = Array.isArray(body.orders) ? (body.orders.filter(isRecord) as Order[]) : [];
  return { count: Number(body.count ?? orders.length) || 0, timestamp: String(body.timestamp ?? ""), orders };
}

/**
 * Every order of a query, one page per step. The page size is the service's:
 * a page shorter than the first one, or an empty page, ends the listing.
 */
export async function* pageOrders(caller: ServiceCaller, query: Omit<OrderQuery, "page"> = {}): AsyncGenerator<Order[]> {
  let pageSize = 0;
  for (let page = 1; ; page++) {
    const { orders } = await listOrders(caller, { ...query, page });
    if (orders.length === 0) return;
    yield orders;
    if (page === 1) pageSize = orders.length;
    if (orders.length < pageSize) return;
  }
}

/** One order by `oid` (numeric) or `order` (channel + ordernumber); null when there is none. */
export async function getOrder(caller: ServiceCaller, oid: string | number, signal?: AbortSignal): Promise<Order | null> {
  try {
    const res = await caller.send({ method: "GET", path: orderPath(oid), signal });
    const body = asRecord(res.body);
    const candidates: unknown[] = Array.isArray(body.orders) ? body.orders : isRecord(body.order) ? [body.order] : [body];
    // The path also serves channel and status listings: only the order asked for counts.
    const wanted = String(oid);
    const match = candidates.filter(isRecord).find((o) => String(o.oid) === wanted || String(o.order) === wanted);
    return (match as Order | undefined) ?? null;
  } catch (err) {
    if (err instanceof ConveyorError && err.details.status === 404) return null;
    throw err;
  }
}

/**
 * Sets fields of one order. Repeating the same PATCH is harmless, except one
 * that adds shipments or refunds without their id: pass `idempotent: false` then.
 */
export async function updateOrder(
  caller: ServiceCaller,
  oid: string | number,
  fields: Order,
  options: { idempotent?: boolean; signal?: AbortSignal } = {},
): Promise<MutationResult> {
  const path = orderPath(oid);
  const res = await caller.send({ method: "PATCH", path, json: fields, idempotent: options.idempotent ?? true, signal: options.signal });
  return single("PATCH", path, res.body);
}

export async function updateOrders(
  caller: ServiceCaller,
  bulk: OrderBulk,
  options: { idempotent?: boolean; signal?: AbortSignal } = {},
): Promise<MutationResult> {
  const res = await caller.send({ method: "PATCH", path: "/v3/orders", json: bulk, idempotent: options.idempotent ?? true, signal: options.signal });
  return mutationOf(res.body);
}

/** Delete = archive: the record stays with `archived` true, so repeating it is safe. */
export async function archiveOrder(caller: ServiceCaller, oid: string | number, signal?: AbortSignal): Promise<MutationResult> {
  const path = orderPath(oid);
  const res = await caller.send({ method: "DELETE", path, idempotent: true, signal });
  return single("DELETE", path, res.body);
}

export async function archiveOrders(caller: ServiceCaller, bulk: OrderBulk, signal?: AbortSignal): Promise<MutationResult> {
  const res = await caller.send({ method: "DELETE", path: "/v3/orders", json: bulk, idempotent: true, signal });
  return mutationOf(res.body);
}

/** Combine (`oid` = the parent) or split (`oid` = the order to split); `oidconsolidate` names the other. */
export async function consolidateOrders(
  caller: ServiceCaller,
  kind: "combine" | "split",
  fields: Order & { oid: string | number },
  signal?: AbortSignal,
): Promise<MutationResult> {
  const path = `/v3/orders/${kind}`;
  const res = await caller.send({ method: "POST", path, json: fields, signal });
  return single("POST", path, res.body);
}
