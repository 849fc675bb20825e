import { sqlTime } from "./db.js";
import type { OrderData, StoredItem, StoredOrder } from "./order-store.js";

/** Order `status` values a write may set (v3 part 3); CANCELED and REFUNDED are read-only. */
export const ORDER_STATUS_WRITE = ["INCOMPLETE", "READY", "PENDING", "ORDERED", "DROPSHIPPED", "COMPLETE", "ARCHIVED"] as const;
export const STEP_STATUS = ["INCOMPLETE", "PENDING", "COMPLETE"] as const;

/** Length limits of v3 part 8. */
export const ORDER_LIMITS: Record<string, number> = { ordernumber: 100, channel: 50, discountcode: 50, currency: 10 };
export const ITEM_LIMITS: Record<string, number> = { sku: 100, title: 500 };

export const ADDRESS_FIELDS = ["country", "firstname", "middlename", "lastname", "company", "street1", "street2", "street3", "city", "stateprovince", "postalcode", "phone", "phone2"] as const;
export const ITEM_FIELDS = ["itemid", "sku", "title", "price", "quantity", "media", "weight", "dimweight", "boxlength", "boxwidth", "boxheight", "source"] as const;
export const SHIPMENT_FIELDS = ["shipid", "shipcarrier", "shipcost", "shipdate", "shipdetails", "shipservice", "shiptracking", "shipuser"] as const;
export const REFUND_FIELDS = ["refundid", "refunddate", "refunddetails"] as const;
/** String fields every order read carries (v3 part 2.3), in that order; then the ones the seed does not list. */
export const ORDER_READ_FIELDS = [
  "account", "archived", "channel", "comments", "correlationid", "currency", "date", "dateupdated", "dateupdatedutc", "dateutc",
  "discountcode", "discounttotal", "email", "gift", "handlingtotal", "instance", "ip", "itemtotal", "oid", "oidconsolidate", "order",
  "ordernumber", "payment", "paymentdate", "paymentstatus", "shippingcarrier", "shippingservice", "shippingstatus", "status",
  "total", "shippingtotal", "taxtotal", "transactionid", "sold",
] as const;
/** Body keys that are not stored as plain order fields. */
const STRUCTURED = new Set(["billing", "shipping", "items", "shipments", "refunds", "details", "meta", "internalnotes", "internalnotesoverwrite", "oid", "order", "dateupdated", "dateupdatedutc",
  "shipitems", "shipsku", "shipquantity", "shipskufield", "shipskuvalue", "refunditems", "refundsku", "refundquantity"]);
const BOOLEAN_FIELDS = new Set(["gift", "archived", "sold"]);

export type Body = Record<string, unknown>;

/** Scalars as the service stores them: strings; booleans as 1/0; null as empty. */
export function str(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "1" : "0";
  if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

function boolText(value: unknown): string {
  const t = str(value).trim().toLowerCase();
  return t === "1" || t === "true" || t === "yes" ? "1" : "0";
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.map((v) => record(v) ?? {});
  const one = record(value);
  return one ? [one] : [];
}

function jsonish(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function strings(value: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) out[k] = str(v);
  return out;
}

/** What is wrong with an order body, one message per problem (the validation envelope lists them). */
export function validateOrder(body: Body, creating: boolean): string[] {
  const problems: string[] = [];
  for (const [field, max] of Object.entries(ORDER_LIMITS)) {
    const v = str(body[field]);
    if (v.length > max) problems.push(`${field} is ${v.length} characters; the limit is ${max}`);
  }
  list(body.items).forEach((item, i) => {
    for (const [field, max] of Object.entries(ITEM_LIMITS)) {
      const v = str(item[field]);
      if (v.length > max) problems.push(`items[${i}].${field} is ${v.length} characters; the limit is ${max}`);
    }
  });
  const status = str(body.status).toUpperCase();
  if (status && !(ORDER_STATUS_WRITE as readonly string[]).includes(status)) {
    problems.push(`status ${JSON.stringify(body.status)} cannot be written: use one of ${ORDER_STATUS_WRITE.join(", ")}`);
  }
  for (const field of ["paymentstatus", "shippingstatus"]) {
    const v = str(body[field]).toUpperCase();
    if (v && !(STEP_STATUS as readonly string[]).includes(v)) problems.push(`${field} ${JSON.stringify(body[field])} is not one of ${STEP_STATUS.join(", ")}`);
  }
  if (creating) {
    if (!str(body.ordernumber).trim()) problems.push("ordernumber is required to create an order");
    if (str(body.total).trim() === "") problems.push("total is required to create an order");
    if (list(body.items).length === 0) problems.push("items is required to create an order: give one or more order items");
  }
  return problems;
}

/** Product lookup for order lines: `sku` equals the product guid when the product exists. */
export type ProductLookup = (sku: string) => Record<string, string> | undefined;

export interface ApplyContext {
  now: number;
  product: ProductLookup;
  nextId: (kind: "itemid" | "shipid" | "refundid") => string;
}

export function emptyOrder(): OrderData {
  return { fields: {}, billing: {}, shipping: {}, items: [], shipments: [], refunds: [], details: {}, internalnotes: {}, meta: [] };
}

function address(target: Record<string, string>, value: unknown): void {
  for (const [k, v] of Object.entries(record(value) ?? {})) target[k === "streetl" ? "street1" : k] = str(v);
}

function newItem(input: Record<string, unknown>, ctx: ApplyContext): StoredItem {
  const fields = strings(input);
  delete fields.itemdetails;
  const product = fields.sku ? ctx.product(fields.sku) : undefined;
  // For products that exist, missing line fields are filled in from the product (part 2.3).
  if (product) for (const f of ["title", "price", "weight", "boxlength", "boxwidth", "boxheight"]) if (!fields[f] && product[f]) fields[f] = product[f];
  if (product && !fields.media && product.media1) fields.media = product.media1;
  fields.itemid = ctx.nextId("itemid");
  return { fields, product: product ?? {} };
}

/**
 * Writes a create or update body into an order. Scalars overwrite; addresses
 * merge; lines, shipments and refunds with their id update the one they name
 * and without it are added; a shipment whose tracking number the order
 * already has is not added again. `paymentdate` makes paymentstatus COMPLETE.
 */
export function applyOrderBody(order: OrderData, body: Body, ctx: ApplyContext): string[] {
  const problems: string[] = [];
  const stamp = sqlTime(new Date(ctx.now));
  for (const [key, value] of Object.entries(body)) {
    if (STRUCTURED.has(key) || record(value) || Array.isArray(value)) continue;
    order.fields[key] = BOOLEAN_FIELDS.has(key) ? boolText(value) : str(value);
  }
  for (const key of ["status", "paymentstatus", "shippingstatus"]) if (order.fields[key]) order.fields[key] = order.fields[key].toUpperCase();
  if (str(body.paymentdate).trim()) order.fields.paymentstatus = "COMPLETE";
  address(order.billing, body.billing);
  address(order.shipping, body.shipping);
  if (body.details !== undefined) order.details = record(jsonish(body.details)) ?? {};
  if (body.meta !== undefined) {
    const meta = jsonish(body.meta);
    order.meta = Array.isArray(meta) ? meta : meta === "" || meta === null ? [] : [meta];
  }
  applyNotes(order, body, stamp);

  for (const item of list(body.items)) {
    const id = str(item.itemid);
    if (!id) {
      order.items.push(newItem(item, ctx));
      continue;
    }
    const existing = order.items.find((line) => line.fields.itemid === id);
    if (!existing) problems.push(`the order has no item with itemid ${id}; leave itemid out to add an item`);
    else Object.assign(existing.fields, strings(item), { itemid: id });
  }
  const shipDetails = shippedItems(body, order);
  for (const shipment of list(body.shipments)) {
    const fields = strings(shipment);
    if (fields.shipdate?.toUpperCase() === "NOW") fields.shipdate = stamp;
    if (fields.shipid) {
      const existing = order.shipments.find((s) => s.shipid === fields.shipid);
      if (!existing) problems.push(`the order has no shipment with shipid ${fields.shipid}; leave shipid out to add one`);
      else Object.assign(existing, fields);
      continue;
    }
    if (fields.shiptracking && order.shipments.some((s) => s.shiptracking === fields.shiptracking)) continue;
    if (!fields.shipdetails && shipDetails) fields.shipdetails = shipDetails;
    order.shipments.push({ ...fields, shipid: ctx.nextId("shipid") });
  }
  const refundDetails = refundedItems(body);
  for (const refund of list(body.refunds)) {
    const fields = strings(refund);
    if (fields.refundid) {
      const existing = order.refunds.find((r) => r.refundid === fields.refundid);
      if (!existing) problems.push(`the order has no refund with refundid ${fields.refundid}; leave refundid out to add one`);
      else Object.assign(existing, fields);
      continue;
    }
    if (!fields.refunddetails && refundDetails) fields.refunddetails = refundDetails;
    order.refunds.push({ ...fields, refundid: ctx.nextId("refundid") });
  }
  order.fields.order = `${order.fields.channel ?? ""}${order.fields.ordernumber ?? ""}`;
  if (!order.fields.date) order.fields.date = stamp;
  if (!order.fields.dateutc) order.fields.dateutc = order.fields.date;
  order.fields.dateupdated = stamp;
  order.fields.dateupdatedutc = stamp;
  return problems;
}

function applyNotes(order: OrderData, body: Body, stamp: string): void {
  if (body.internalnotes === undefined) return;
  const overwrite = body.internalnotesoverwrite !== undefined && !["", "0", "false"].includes(str(body.internalnotesoverwrite).toLowerCase());
  const notes = jsonish(body.internalnotes);
  const given: Record<string, string> = record(notes) ? strings(record(notes) ?? {}) : str(notes) ? { [stamp]: str(notes) } : {};
  order.internalnotes = overwrite ? given : { ...order.internalnotes, ...given };
}

/** `shipitems`, or `shipsku` + `shipquantity` (mapped through `shipskufield`/`shipskuvalue`), as shipment details. */
function shippedItems(body: Body, order: OrderData): string | undefined {
  const items = jsonish(body.shipitems);
  if (Array.isArray(items)) return JSON.stringify({ items });
  let sku = str(body.shipsku);
  const field = str(body.shipskufield);
  if (field && body.shipskuvalue !== undefined) {
    const line = order.items.find((l) => l.product[field] === str(body.shipskuvalue) || l.fields[field] === str(body.shipskuvalue));
    if (line) sku = line.fields.sku ?? sku;
  }
  return sku ? JSON.stringify({ items: [{ sku, quantity: str(body.shipquantity) || "1", fulfilled: "1" }] }) : undefined;
}

function refundedItems(body: Body): string | undefined {
  const items = jsonish(body.refunditems);
  if (Array.isArray(items)) return JSON.stringify({ items });
  const sku = str(body.refundsku);
  return sku ? JSON.stringify({ items: [{ sku, quantity: str(body.refundquantity) || "1" }] }) : undefined;
}

/** The order as v3 reads it: strings, `street1`, item details, notes as a map or an empty array. */
export function orderView(order: StoredOrder): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ORDER_READ_FIELDS) out[f] = "";
  Object.assign(out, order.fields, { oid: String(order.oid), archived: order.fields.archived === "1" ? "1" : "0" });
  const addr = (a: Record<string, string>): Record<string, string> => ({ ...Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, ""])), ...a });
  out.billing = addr(order.billing);
  out.shipping = addr(order.shipping);
  out.details = order.details;
  out.internalnotes = Object.keys(order.internalnotes).length ? order.internalnotes : [];
  out.meta = order.meta;
  out.refunds = order.refunds.map((r) => ({ ...Object.fromEntries(REFUND_FIELDS.map((f) => [f, ""])), ...r }));
  out.shipments = order.shipments.map((s) => ({ ...Object.fromEntries(SHIPMENT_FIELDS.map((f) => [f, ""])), ...s }));
  out.items = order.items.map((line) => ({
    ...Object.fromEntries(ITEM_FIELDS.map((f) => [f, ""])),
    ...line.fields,
    itemdetails: { "order-item-id": line.fields.itemid ?? "", product: line.product },
  }));
  return out;
}
