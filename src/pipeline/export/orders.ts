/**
 * Orders for an export: `GET /v3/orders?q=…` page by page, oldest first
 * (`sort=oid&sortorder=asc`, so an order placed while the run pages lands on
 * a later page instead of pushing every page one order down), flattened into
 * the row shape the mapper reads: order fields by name, `billing.X` and
 * `shipping.X`, and `items.X`, `shipments.X`, `refunds.X`.
 *
 * In line-item form every order line is one row carrying that line's
 * `items.X`; otherwise one row per order, and list parts (items, shipments,
 * refunds) give the values of all their entries joined by `*`, the service's
 * own convention in order exports. A row seen twice (the listing shifted
 * while paging) goes out once.
 *
 * @module
 */

import type { Order, ServiceClient } from "../../service/index.js";
import type { SelectedRow } from "./selected.js";

const OBJECTS = ["billing", "shipping"] as const;
const LISTS = ["items", "shipments", "refunds"] as const;
export const LIST_JOIN = "*";

export interface OrderSelectOptions {
  search?: string | undefined;
  lineitem: boolean;
  signal?: AbortSignal | undefined;
  /** An event run: only these orders (the events' `oid`s), within `search`; never the whole listing. */
  only?: readonly string[] | undefined;
}

export async function* selectOrders(client: ServiceClient, options: OrderSelectOptions): AsyncGenerator<SelectedRow> {
  const seen = new Set<string>();
  const queries = options.only === undefined ? [options.search] : eventSearches(options.search, options.only);
  for (const q of queries) {
    const pages = client.pageOrders({
      ...(q ? { q } : {}),
      lineitem: options.lineitem,
      sort: "oid",
      sortorder: "asc",
      ...(options.signal ? { signal: options.signal } : {}),
    });
    for await (const page of pages) {
      for (const order of page) {
        for (const row of orderRows(order, options.lineitem)) {
          if (seen.has(row.key)) continue;
          seen.add(row.key);
          yield row;
        }
      }
    }
  }
}

/** Order ids per `GET /v3/orders` query of an event run: the URL stays a few kilobytes at most. */
export const EVENT_ORDERS_PER_QUERY = 100;

/** `oid:=12`, or quoted when the id is not a plain number, so an id can never add a term of its own. */
function oidTerm(oid: string): string {
  return /^\d+$/.test(oid) ? `oid:=${oid}` : `oid:="${oid.replace(/[\\"%]/g, (c) => `\\${c}`)}"`;
}

/**
 * The searches of an event run: the file config's own `search` AND one of
 * the events' orders (`(oid:=1 oid:=2 …)`, parentheses being OR), at most
 * EVENT_ORDERS_PER_QUERY ids each. No order: no query at all, so an event
 * run never falls back to reading every order.
 */
export function eventSearches(search: string | undefined, orders: readonly string[]): string[] {
  const ids = [...new Set(orders.map((o) => o.trim()).filter((o) => o !== ""))];
  const own = search?.trim() ?? "";
  const out: string[] = [];
  for (let i = 0; i < ids.length; i += EVENT_ORDERS_PER_QUERY) {
    const terms = `(${ids.slice(i, i + EVENT_ORDERS_PER_QUERY).map(oidTerm).join(" ")})`;
    out.push(own === "" ? terms : `${own} ${terms}`);
  }
  return out;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function entries(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null && !Array.isArray(e)) : [];
}

/** `shipments.shiptracking` = the tracking numbers of all shipments, joined. */
function joinList(out: Record<string, unknown>, part: string, list: Record<string, unknown>[]): void {
  const names = new Set(list.flatMap((e) => Object.keys(e)));
  for (const name of names) out[`${part}.${name}`] = list.map((e) => text(e[name])).join(LIST_JOIN);
}

/** The rows of one order as read (seed v3 part 2.3). */
export function orderRows(order: Order, lineitem: boolean): SelectedRow[] {
  const oid = text(order.oid);
  const base: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(order)) {
    if ((OBJECTS as readonly string[]).includes(k) || (LISTS as readonly string[]).includes(k)) continue;
    base[k] = v;
  }
  base.oid = oid;
  for (const part of OBJECTS) {
    const address = order[part];
    if (typeof address !== "object" || address === null || Array.isArray(address)) continue;
    for (const [k, v] of Object.entries(address as Record<string, unknown>)) base[`${part}.${k}`] = text(v);
  }
  joinList(base, "shipments", entries(order.shipments));
  joinList(base, "refunds", entries(order.refunds));
  const items = entries(order.items);
  const nested = orderNested(order, items);
  if (!lineitem || items.length === 0) {
    const row = { ...base };
    joinList(row, "items", items);
    return [{ kind: "row", record: row, key: oid, group: oid, nested }];
  }
  return items.map((item, i) => {
    const row: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(item)) row[`items.${k}`] = text(v);
    const line = text(item.itemid) || String(i + 1);
    return { kind: "row", record: row, key: `${oid}#${line}`, group: oid, nested: { ...nested, item } };
  });
}

/** What a template sees besides the mapped columns: the order as the service holds it, lists as lists. */
function orderNested(order: Order, items: Record<string, unknown>[]): Record<string, unknown> {
  const own: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(order)) if (!(LISTS as readonly string[]).includes(k)) own[k] = v;
  const object = (v: unknown): Record<string, unknown> => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  return { order: own, billing: object(order.billing), shipping: object(order.shipping), items, shipments: entries(order.shipments), refunds: entries(order.refunds) };
}
