import type { StoredItem, StoredOrder } from "./order-store.js";
import type { Matcher, SearchRecord } from "./query.js";

/**
 * The record a search sees for an order: its own fields, `oid`, the address
 * fields both as `billing.city` and `billingcity`, and one line item's fields
 * (sku, title, price, quantity…). An order matches when one of its lines
 * does, so `sku:=ABC` finds the orders that sold ABC; an order without lines
 * is matched on its own fields.
 */
export function orderRecords(order: StoredOrder): SearchRecord[] {
  const base: SearchRecord = { ...order.fields, oid: String(order.oid), archived: order.fields.archived === "1" ? "1" : "0" };
  for (const [prefix, address] of [["billing", order.billing], ["shipping", order.shipping]] as const) {
    for (const [k, v] of Object.entries(address)) {
      base[`${prefix}.${k}`] = v;
      base[`${prefix}${k}`] = v;
    }
  }
  const tracking = order.shipments.map((s) => s.shiptracking).filter(Boolean);
  if (tracking.length) base.shiptracking = tracking.join(" ");
  if (order.items.length === 0) return [base];
  return order.items.map((line) => lineRecord(base, line));
}

function lineRecord(base: SearchRecord, line: StoredItem): SearchRecord {
  const out: SearchRecord = { ...base };
  for (const [k, v] of Object.entries(line.fields)) {
    out[k in base ? `items.${k}` : k] = v;
    out[`items.${k}`] = v;
  }
  return out;
}

/** Does the order match; with `filterLines`, the lines that match (all lines when the order has a single one). */
export function matchOrder(order: StoredOrder, matches: Matcher, filterLines: boolean): StoredOrder | undefined {
  const records = orderRecords(order);
  const hits = records.map((r) => matches(r));
  if (!hits.some(Boolean)) return undefined;
  if (!filterLines || order.items.length <= 1) return order;
  return { ...order, items: order.items.filter((_line, i) => hits[i]) };
}
