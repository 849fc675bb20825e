import { ConveyorError } from "../errors.js";
import { NONE_IGNORED, isBlank, newRecord, type MappedRecord, type RowErrorInfo } from "./types.js";

/**
 * Orders from mapped rows (runs.md, "Orders"): rows sharing an identifier form
 * one order; a row adds a line item when it has item fields, and a shipment
 * when it has shipment fields.
 *
 * Decisions where the spec is silent:
 * - order, billing and shipping fields: a later row's non-blank value wins, a
 *   blank never clears what an earlier row gave;
 * - a shipment is keyed by `shiptracking` (trimmed, case ignored); rows with
 *   the same tracking number in one order collapse into one shipment, their
 *   `shipsku`/`shipquantity` pairs gathered into `shipitems` (one entry per
 *   sku, the last row's quantity wins); a shipment without a tracking number is
 *   never merged;
 * - a refund is keyed by `refundid` when it has one;
 * - status values are compared ignoring case and written in capitals;
 *   `shipments.shipdate` is `NOW` (any case) or a date that parses;
 * - a row that fails validation adds nothing to its order.
 * Orders are held in memory until the file ends: order feeds are small (a
 * day's orders), and one order's rows need not be adjacent.
 */
export const ORDER_STATUSES = ["INCOMPLETE", "READY", "PENDING", "ORDERED", "DROPSHIPPED", "COMPLETE", "ARCHIVED"] as const;
export const PAYMENT_STATUSES = ["INCOMPLETE", "PENDING", "COMPLETE"] as const;
export const SHIPPING_STATUSES = PAYMENT_STATUSES;

const STATUS_FIELDS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ["status", ORDER_STATUSES],
  ["paymentstatus", PAYMENT_STATUSES],
  ["shippingstatus", SHIPPING_STATUSES],
]);

export const ADDRESS_FIELDS = ["country", "firstname", "middlename", "lastname", "company", "street1", "streetl", "street2", "street3", "city", "stateprovince", "postalcode", "phone", "phone2"] as const;
export const SHIPMENT_FIELDS = ["shipid", "shipcarrier", "shipservice", "shiptracking", "shipdate", "shipcost", "shipuser", "shipdetails", "shipsku", "shipquantity", "shipskufield", "shipskuvalue"] as const;
export const REFUND_FIELDS = ["refundid", "refunddate", "refunddetails", "refundsku", "refundquantity"] as const;

type Part = "billing" | "shipping" | "items" | "shipments" | "refunds";
const PARTS: ReadonlyMap<string, readonly string[] | null> = new Map<string, readonly string[] | null>([
  ["billing", ADDRESS_FIELDS],
  ["shipping", ADDRESS_FIELDS],
  // Items carry account-defined custom fields: any name is allowed.
  ["items", null],
  ["shipments", SHIPMENT_FIELDS],
  ["refunds", REFUND_FIELDS],
]);

export interface ShipmentDraft {
  fields: MappedRecord;
  shipitems: Array<{ sku: string; quantity: string }>;
}

export interface OrderDraft {
  identifier: string;
  fields: MappedRecord;
  billing: MappedRecord | null;
  shipping: MappedRecord | null;
  items: MappedRecord[];
  shipments: ShipmentDraft[];
  refunds: MappedRecord[];
  /** Source lines that made this order, in file order. */
  lines: number[];
  /** Fields (as mapped, `shipping.city` included) a rule asked to leave alone. */
  ignored: Set<string>;
}

/**
 * Checks the service fields a mapping produces for an orders automation, at
 * definition time: `billing.`, `shipping.`, `shipments.` and `refunds.` take the
 * seed's field lists; other prefixes are refused.
 */
export function checkOrderFields(fields: Iterable<string>): void {
  const problems: string[] = [];
  for (const field of fields) {
    const dot = field.indexOf(".");
    if (dot < 0) continue;
    const prefix = field.slice(0, dot);
    const name = field.slice(dot + 1);
    if (!PARTS.has(prefix)) {
      problems.push(`"${field}": "${prefix}." is not a part of an order (use ${[...PARTS.keys()].map((p) => `${p}.`).join(", ")})`);
      continue;
    }
    const allowed = PARTS.get(prefix);
    if (allowed && !allowed.includes(name)) problems.push(`"${field}": ${prefix} has no field "${name}" (allowed: ${allowed.join(", ")})`);
  }
  if (problems.length > 0) {
    throw new ConveyorError("definition_invalid", `Order fields the service does not know: ${problems.join("; ")}`, {
      details: { field: "field_map", problems },
      hint: "Order fields are order fields (oid, ordernumber, status, …) or billing.<f>, shipping.<f>, items.<f>, shipments.<f>, refunds.<f>.",
    });
  }
}

/** Status values against the seed's writable sets (normalized to upper case in place), and the ship date. */
export function checkOrderValues(record: MappedRecord): { message: string; field: string } | null {
  for (const [field, allowed] of STATUS_FIELDS) {
    const value = record[field];
    if (value === undefined || isBlank(value)) continue;
    const upper = value.trim().toUpperCase();
    if (!allowed.includes(upper)) return { field, message: `${field} "${value}" is not a status the service accepts (allowed: ${allowed.join(", ")})` };
    record[field] = upper;
  }
  const shipdate = record["shipments.shipdate"];
  if (shipdate !== undefined && !isBlank(shipdate)) {
    const text = shipdate.trim();
    if (text.toUpperCase() === "NOW") record["shipments.shipdate"] = "NOW";
    else if (Number.isNaN(Date.parse(text))) return { field: "shipments.shipdate", message: `shipments.shipdate "${shipdate}" is not a date (write a date such as 2026-11-01, or NOW)` };
  }
  return null;
}

/** Non-blank values of one row, split by part. Blank cells carry nothing in a merged order. */
function split(record: MappedRecord): { order: MappedRecord; parts: Map<Part, MappedRecord> } {
  const order = newRecord();
  const parts = new Map<Part, MappedRecord>();
  for (const field in record) {
    const value = record[field];
    if (value === undefined || isBlank(value)) continue;
    const dot = field.indexOf(".");
    const prefix = dot < 0 ? "" : field.slice(0, dot);
    if (dot < 0 || !PARTS.has(prefix)) {
      order[field] = value;
      continue;
    }
    const part = prefix as Part;
    let target = parts.get(part);
    if (target === undefined) parts.set(part, (target = newRecord()));
    target[field.slice(dot + 1)] = value;
  }
  return { order, parts };
}

export class OrderGrouper {
  private readonly byId = new Map<string, OrderDraft>();
  /** Rows that joined an order an earlier row had started. */
  merged = 0;
  /** Rows whose shipment collapsed into one with the same tracking number. */
  duplicateShipments = 0;

  get size(): number {
    return this.byId.size;
  }

  /** Adds one mapped row; returns a row error (and changes nothing) when it fails validation. */
  add(identifier: string, record: MappedRecord, ignored: ReadonlySet<string> = NONE_IGNORED, line = 0): RowErrorInfo | null {
    const problem = checkOrderValues(record);
    if (problem !== null) return { line, message: problem.message, field: problem.field };
    let order = this.byId.get(identifier);
    if (order === undefined) {
      order = { identifier, fields: newRecord(), billing: null, shipping: null, items: [], shipments: [], refunds: [], lines: [], ignored: new Set() };
      this.byId.set(identifier, order);
    } else {
      this.merged++;
    }
    order.lines.push(line);
    for (const field of ignored) order.ignored.add(field);
    const { order: top, parts } = split(record);
    Object.assign(order.fields, top);
    const billing = parts.get("billing");
    if (billing) order.billing = Object.assign(order.billing ?? newRecord(), billing);
    const shipping = parts.get("shipping");
    if (shipping) order.shipping = Object.assign(order.shipping ?? newRecord(), shipping);
    const item = parts.get("items");
    if (item) order.items.push(item);
    const shipment = parts.get("shipments");
    if (shipment) this.addShipment(order, shipment);
    const refund = parts.get("refunds");
    if (refund) addKeyed(order.refunds, refund, "refundid");
    return null;
  }

  private addShipment(order: OrderDraft, fields: MappedRecord): void {
    const { shipsku, shipquantity, ...rest } = fields;
    const tracking = rest.shiptracking?.trim().toUpperCase();
    let shipment = tracking === undefined ? undefined : order.shipments.find((s) => s.fields.shiptracking?.trim().toUpperCase() === tracking);
    if (shipment === undefined) {
      shipment = { fields: Object.assign(newRecord(), rest), shipitems: [] };
      order.shipments.push(shipment);
    } else {
      this.duplicateShipments++;
      Object.assign(shipment.fields, rest);
    }
    if (shipsku !== undefined) {
      const entry = { sku: shipsku.trim(), quantity: shipquantity?.trim() ?? "1" };
      const at = shipment.shipitems.findIndex((i) => i.sku === entry.sku);
      if (at >= 0) shipment.shipitems[at] = entry;
      else shipment.shipitems.push(entry);
    }
  }

  /** The orders in the order their first row appeared. */
  orders(): IterableIterator<OrderDraft> {
    return this.byId.values();
  }
}

function addKeyed(list: MappedRecord[], entry: MappedRecord, key: string): void {
  const id = entry[key]?.trim();
  const at = id === undefined ? -1 : list.findIndex((e) => e[key]?.trim() === id);
  if (at >= 0) Object.assign(list[at] as MappedRecord, entry);
  else list.push(entry);
}
