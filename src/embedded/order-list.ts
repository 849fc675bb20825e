import type { ServiceContext } from "./context.js";
import { badRequest as bad, text, truthy } from "../http/envelopes.js";
import { orderView } from "./order-model.js";
import { matchOrder } from "./order-search.js";
import { ORDER_SORT_KEYS, type StoredOrder } from "./order-store.js";
import { andQuery, compileQuery } from "./query.js";

/** Orders per page of `GET /v3/orders` (the seed does not say; the same 50 as v1 pages). */
export const ORDERS_PAGE_SIZE = 50;
export const ORDER_LIST_PARAMS = ["page", "sort", "sortorder", "q", "lineitem", "lineitem_filter"] as const;

/** Part 7: a listing refuses query parameters it does not know, naming them and the valid ones. */
export function rejectUnknownParams(query: Record<string, unknown>): void {
  const unknown = Object.keys(query).filter((k) => !(ORDER_LIST_PARAMS as readonly string[]).includes(k));
  if (unknown.length === 0) return;
  throw bad(`unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; valid parameters: ${ORDER_LIST_PARAMS.join(", ")}`);
}

export interface ListOptions {
  /** A search the path stands for (`/v3/orders/shipped`), ANDed with `q`. */
  pathSearch?: string;
  /** `/v3/orders/lineitem` forces the line-item format. */
  lineitem?: boolean;
}

/**
 * `GET /v3/orders`: archived orders included (search `archived:=0` to leave
 * them out), sorted by `sort` (default oid) `sortorder` (default desc), 50 a
 * page. With `lineitem` every order line is its own entry (the order with
 * that one line) and `count` counts lines; `lineitem_filter` keeps only the
 * lines of multi-line orders that meet `q`.
 */
export function listOrders(ctx: ServiceContext, query: Record<string, unknown>, options: ListOptions = {}): Record<string, unknown> {
  rejectUnknownParams(query);
  const pageText = text(query.page) ?? "1";
  if (!/^\d+$/.test(pageText) || Number(pageText) < 1) throw bad(`page must be a whole number 1 or greater, not ${JSON.stringify(pageText)}`);
  const page = Number(pageText);
  const sort = text(query.sort) ?? "oid";
  if (!(ORDER_SORT_KEYS as readonly string[]).includes(sort)) throw bad(`sort ${JSON.stringify(sort)} is not a valid key: use one of ${ORDER_SORT_KEYS.join(", ")}`);
  const sortorder = (text(query.sortorder) ?? "desc").toLowerCase();
  if (sortorder !== "asc" && sortorder !== "desc") throw bad(`sortorder must be asc or desc, not ${JSON.stringify(query.sortorder)}`);
  const lineitem = options.lineitem === true || truthy(query.lineitem);
  const filterLines = truthy(query.lineitem_filter);
  const matches = compileQuery(andQuery(options.pathSearch, text(query.q)));

  const first = (page - 1) * ORDERS_PAGE_SIZE;
  const out: Record<string, unknown>[] = [];
  let count = 0;
  const take = (order: StoredOrder): void => {
    count += 1;
    if (count > first && out.length < ORDERS_PAGE_SIZE) out.push(orderView(order));
  };
  for (const order of ctx.orders.sorted(sort, sortorder === "desc")) {
    const hit = matchOrder(order, matches, filterLines);
    if (!hit) continue;
    if (!lineitem || hit.items.length === 0) take(hit);
    else for (const line of hit.items) take({ ...hit, items: [line] });
  }
  return { count: String(count), timestamp: new Date(ctx.now()).toISOString(), orders: out };
}
