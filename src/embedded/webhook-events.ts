import { randomBytes } from "node:crypto";
import type { StoredOrder } from "./order-store.js";

/**
 * The events of seed part 6 and their CloudEvents envelope (part 2.5). The
 * seed leaves the service prefix open; `sds` is the one the service's own
 * connectors (sdsftp, sds3) carry.
 */
export const EVENT_PREFIX = "sds";

export interface EventType {
  type: string;
  category: string;
  description: string;
  /** Announced types cannot be subscribed to yet. */
  enabled: boolean;
}

export const EVENT_TYPES: readonly EventType[] = [
  { type: "order.created", category: "order", description: "a new order is created", enabled: true },
  { type: "order.updated", category: "order", description: "an existing order is updated", enabled: true },
  { type: "order.fulfilled", category: "order", description: "an order is marked fulfilled (shipping status COMPLETE)", enabled: true },
  { type: "order.status_changed", category: "order", description: "an order status changes", enabled: true },
  { type: "product.created", category: "product", description: "a product is created", enabled: false },
  { type: "product.updated", category: "product", description: "a product is updated", enabled: false },
  { type: "product.deleted", category: "product", description: "a product is deleted", enabled: false },
  { type: "product.inventory_changed", category: "product", description: "product inventory levels change", enabled: false },
];

export const SUBSCRIBABLE = new Set(EVENT_TYPES.filter((e) => e.enabled).map((e) => e.type));

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}

/** ISO 8601 in UTC with microseconds, as part 2.5 asks; the clock has milliseconds, so the last three digits are 0. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export interface Envelope {
  specversion: "1.0";
  type: string;
  source: string;
  id: string;
  time: string;
  datacontenttype: "application/json";
  data: { oid: number; channel: string; status: string; resource_type: "order"; resource_id: string };
}

export function orderEnvelope(type: string, account: string, order: Pick<StoredOrder, "oid" | "fields">, now: number): Envelope {
  return {
    specversion: "1.0",
    type: `${EVENT_PREFIX}.${type}`,
    source: `/accounts/${encodeURIComponent(account)}`,
    id: newId("evt"),
    time: microTime(now),
    datacontenttype: "application/json",
    data: { oid: order.oid, channel: order.fields.channel ?? "", status: order.fields.status ?? "", resource_type: "order", resource_id: String(order.oid) },
  };
}

/**
 * The events one change of an order fires: every change is an update;
 * a new `status` is also a status change, and a shipping status that
 * becomes COMPLETE a fulfilment. A save that changed nothing (the same
 * tracking file sent twice) fires nothing.
 */
export function orderEvents(before: StoredOrder | undefined, after: StoredOrder): string[] {
  if (!before) return ["order.created"];
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const events = ["order.updated"];
  if ((before.fields.status ?? "") !== (after.fields.status ?? "")) events.push("order.status_changed");
  if (after.fields.shippingstatus === "COMPLETE" && before.fields.shippingstatus !== "COMPLETE") events.push("order.fulfilled");
  return events;
}
