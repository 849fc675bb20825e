import { isPrototypeKey, PROTOTYPE_KEYS_RULE } from "../json-limits.js";
import { str, type Body } from "./order-model.js";

/** Nested lists a dotted header may address; each row adds at most one entry to each. */
const LISTS = new Set(["items", "shipments", "refunds"]);
const OBJECTS = new Set(["billing", "shipping"]);

export interface BulkGroup {
  /** Index of the group in the request: the key of its entry in `failed`. */
  index: number;
  /** Data rows (0-based) that built it, for messages. */
  rows: number[];
  body: Body;
}

export function isBulkBody(body: unknown): body is { header: unknown[]; data: unknown[] } {
  return !!body && typeof body === "object" && Array.isArray((body as Body).header) && Array.isArray((body as Body).data);
}

/**
 * Turns a `{header, data}` body into one order body per order. Header names
 * may be dotted: `billing.city` sets a field of the address, `items.sku`,
 * `shipments.shiptracking` and `refunds.refunddate` build one line, shipment
 * or refund per row. Rows with the same key (`oid`, else `order`, else
 * channel + ordernumber) build one order: the first non-empty value of each
 * order field wins, and every row with line (shipment, refund) values adds
 * one line (shipment, refund); a shipment whose tracking number an earlier
 * row already gave is not added twice.
 */
export function groupRows(header: unknown[], data: unknown[], pathId?: string): { groups: BulkGroup[]; problems: string[] } {
  const names = header.map((h) => str(h).trim());
  const problems: string[] = [];
  // A header name becomes a key of each order body: `__proto__` would set the body's prototype.
  const refused = names.flatMap((name, i) => (name.split(".").some(isPrototypeKey) ? [`header[${i}] is named ${JSON.stringify(name)}; ${PROTOTYPE_KEYS_RULE}`] : []));
  if (refused.length > 0) return { groups: [], problems: refused };
  const byKey = new Map<string, BulkGroup>();
  const groups: BulkGroup[] = [];
  data.forEach((raw, r) => {
    if (!Array.isArray(raw)) {
      problems.push(`data[${r}] is not an array of cells`);
      return;
    }
    if (raw.length !== names.length) {
      problems.push(`data[${r}] has ${raw.length} cells but header has ${names.length}`);
      return;
    }
    const row = rowBody(names, raw);
    const key = str(row.oid) || str(row.order) || (str(row.ordernumber) ? `${str(row.channel)}\u0000${str(row.ordernumber)}` : pathId ?? `row ${r}`);
    const group = byKey.get(key);
    if (!group) {
      const fresh: BulkGroup = { index: groups.length, rows: [r], body: row };
      byKey.set(key, fresh);
      groups.push(fresh);
      return;
    }
    group.rows.push(r);
    mergeRow(group.body, row);
  });
  return { groups, problems };
}

function rowBody(names: string[], cells: unknown[]): Body {
  const body: Body = {};
  const entries: Record<string, Record<string, unknown>> = {};
  names.forEach((name, i) => {
    const value = cells[i];
    const dot = name.indexOf(".");
    if (dot < 0) {
      if (str(value) !== "") body[name] = value;
      return;
    }
    const head = name.slice(0, dot);
    const tail = name.slice(dot + 1);
    if (!LISTS.has(head) && !OBJECTS.has(head)) {
      body[name] = value;
      return;
    }
    if (str(value) === "") return;
    entries[head] ??= {};
    (entries[head] as Record<string, unknown>)[tail] = value;
  });
  for (const [head, entry] of Object.entries(entries)) body[head] = LISTS.has(head) ? [entry] : entry;
  return body;
}

function mergeRow(target: Body, row: Body): void {
  for (const [key, value] of Object.entries(row)) {
    if (LISTS.has(key) && Array.isArray(value)) {
      const existing = Array.isArray(target[key]) ? (target[key] as unknown[]) : [];
      const entry = value[0] as Record<string, unknown>;
      const tracking = key === "shipments" ? str(entry.shiptracking) : "";
      const duplicate = tracking !== "" && existing.some((e) => str((e as Record<string, unknown>).shiptracking) === tracking);
      target[key] = duplicate ? existing : [...existing, entry];
    } else if (OBJECTS.has(key)) {
      target[key] = { ...(value as Record<string, unknown>), ...((target[key] as Record<string, unknown> | undefined) ?? {}) };
    } else if (target[key] === undefined || str(target[key]) === "") {
      target[key] = value;
    }
  }
}
