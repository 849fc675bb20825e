/**
 * The lists of an order (line items, shipments, refunds) against the order as
 * the service holds it. Each row of an order file adds an entry, but sending
 * every entry again on every run would add it again, so an entry is matched
 * to one the order has first:
 *
 * - by its id when the file gives one (`itemid`, `shipid`, `refundid`): only
 *   the fields that differ are sent, with the id;
 * - a shipment by its tracking number (trimmed, case ignored): one the order
 *   already has is never sent again (runs.md, "Orders");
 * - a line item by its `sku`, the n-th file line of a sku to the n-th order
 *   line of it: differing fields are sent with the order line's `itemid`;
 * - anything else by equality of every field it carries (a shipment's
 *   `shipdate` of `NOW` is not compared): an equal entry is not sent again.
 *
 * An entry that matches nothing is added. Changes are named `items[n].field`
 * with n the entry's 1-based position in the file's order.
 *
 * @module
 */

import type { ShipmentDraft } from "../../mapping/index.js";
import type { FieldChange } from "../planned-op.js";
import { sameValue } from "./diff.js";

export type Entry = Record<string, string>;

export interface ListResult {
  /** What the request carries for this list: added entries whole, matched ones with their id and changed fields. */
  send: Entry[];
  changes: FieldChange[];
  /** True when an entry is added without an id: repeating such a request would add it twice. */
  adds: boolean;
}

type ListName = "items" | "shipments" | "refunds";
const ID_FIELD: Record<ListName, string> = { items: "itemid", shipments: "shipid", refunds: "refundid" };

function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);
}

/** The entries of one list of a service order, as text. */
export function serviceEntries(order: Record<string, unknown> | undefined, list: ListName): Entry[] {
  const raw = order?.[list];
  if (!Array.isArray(raw)) return [];
  return raw.map((entry) => {
    const out: Entry = {};
    if (entry && typeof entry === "object") for (const [k, v] of Object.entries(entry as Record<string, unknown>)) out[k] = text(v);
    return out;
  });
}

const norm = (v: string | undefined): string => (v ?? "").trim().toUpperCase();
/** Request parameters that ride on a shipment: the service keeps them as shipment details, not as fields to compare. */
const PARAMETERS = new Set(["shipitems", "shipskufield", "shipskuvalue"]);

function equalEntry(file: Entry, service: Entry, list: ListName): boolean {
  return Object.entries(file).every(([f, v]) => PARAMETERS.has(f) || (list === "shipments" && f === "shipdate" && norm(v) === "NOW") || sameValue(service[f], v));
}

/** Fields of a matched entry that differ; the field it was matched by (compared without case) is not one of them. */
function differing(file: Entry, service: Entry, matchedBy: string): Entry {
  const out: Entry = {};
  for (const [f, v] of Object.entries(file)) if (f !== matchedBy && !PARAMETERS.has(f) && !sameValue(service[f], v)) out[f] = v;
  return out;
}

function added(list: ListName, position: number, entry: Entry): FieldChange[] {
  return Object.entries(entry).map(([f, v]) => ({ field: `${list}[${position}].${f}`, before: null, after: v }));
}

/** Matches the file's entries of one list against the service's; with no service order, everything is added. */
export function matchList(list: ListName, file: readonly Entry[], service: readonly Entry[]): ListResult {
  const idField = ID_FIELD[list];
  const taken = new Set<number>();
  const result: ListResult = { send: [], changes: [], adds: false };
  const claim = (test: (s: Entry) => boolean): Entry | undefined => {
    const at = service.findIndex((s, i) => !taken.has(i) && test(s));
    if (at < 0) return undefined;
    taken.add(at);
    return service[at];
  };
  file.forEach((entry, i) => {
    const position = i + 1;
    const id = entry[idField]?.trim();
    let match: Entry | undefined;
    let matchedBy = idField;
    if (id) match = claim((s) => s[idField] === id);
    else if (list === "shipments" && norm(entry.shiptracking)) match = claim((s) => norm(s.shiptracking) === norm(entry.shiptracking));
    else if (list === "items" && norm(entry.sku)) {
      match = claim((s) => norm(s.sku) === norm(entry.sku));
      matchedBy = "sku";
    } else match = claim((s) => equalEntry(entry, s, list));
    if (match === undefined) {
      // An id the order does not have goes to the service as given: its refusal names the id.
      result.send.push({ ...entry });
      result.changes.push(...added(list, position, entry));
      if (!id) result.adds = true;
      return;
    }
    // A known tracking number is never sent again, whatever else the row says.
    if (!id && list === "shipments") return;
    const changed = differing(entry, match, matchedBy);
    if (Object.keys(changed).length === 0) return;
    result.send.push({ [idField]: match[idField] ?? "", ...changed });
    for (const [f, v] of Object.entries(changed)) result.changes.push({ field: `${list}[${position}].${f}`, before: match[f] ?? null, after: v });
  });
  return result;
}

/** A shipment draft as one entry: `shipitems` gathered from `shipsku`/`shipquantity` rows become JSON text. */
export function shipmentEntry(draft: ShipmentDraft): Entry {
  const entry: Entry = { ...draft.fields };
  if (draft.shipitems.length) entry.shipitems = JSON.stringify(draft.shipitems.map((i) => ({ sku: i.sku, quantity: i.quantity, fulfilled: "1" })));
  return entry;
}
