/**
 * The plan of an order import (runs.md step 6), per order of the file: found
 * in the service → update, else create, else skipped with the reason; orders
 * in scope the file does not name → archive.
 *
 * An update carries only what differs from the order the service holds now.
 * The scope read returns whole orders, so this costs nothing, and it matters:
 * writing `shippingstatus` COMPLETE again marks the order shipped on the
 * channels again (seed part 3), and re-sent lines would be added twice. Run
 * diff (the snapshot) applies on top, to order fields and addresses.
 * `diff_update` narrows the comparison to `diff_fields` with `diff_tolerance`,
 * as for products.
 *
 * @module
 */

import type { OrderDraft } from "../../mapping/index.js";
import type { Order } from "../../service/index.js";
import type { FieldChange, OrderAction, PlannedOp } from "../planned-op.js";
import { changedFields } from "./diff.js";
import { matchList, serviceEntries, shipmentEntry, type Entry } from "./order-lines.js";

export interface OrderPlanConfig {
  identifier: string;
  create: boolean;
  update: boolean;
  remove: boolean;
  liveDiff: { fields: ReadonlySet<string> | null; tolerance: number };
}

/** One order's request content, before it is cut into bulk bodies. */
export interface OrderWrite {
  action: OrderAction;
  /** The file's identifier (archive: the service's). */
  identifier: string;
  /** The service's oid for update and archive. */
  oid: string | null;
  /** Order fields and `billing.<f>`/`shipping.<f>` to send. */
  scalars: Record<string, string>;
  items: Entry[];
  shipments: Entry[];
  refunds: Entry[];
  /** Adds lines, shipments or refunds without an id: the request must not be repeated blindly. */
  adds: boolean;
}

export type OrderPlan = { op: PlannedOp; write?: OrderWrite } | { error: string };

/** Fields that name an order rather than describe it: never sent as changes. */
const KEYS = new Set(["oid", "order"]);

function text(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);
}

/** Order fields and addresses of a draft as one flat record, without the fields a rule said to leave alone. */
export function orderScalars(draft: OrderDraft): Record<string, string> {
  const out: Record<string, string> = { ...draft.fields };
  for (const part of ["billing", "shipping"] as const) for (const [k, v] of Object.entries(draft[part] ?? {})) out[`${part}.${k}`] = v;
  for (const f of draft.ignored) delete out[f];
  return out;
}

/** The service's order as the same flat record; the request's `streetl` reads the response's `street1`. */
export function serviceScalars(order: Order): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(order)) if (v === null || typeof v !== "object") out[k] = text(v);
  for (const part of ["billing", "shipping"] as const) {
    const address = order[part];
    if (!address || typeof address !== "object" || Array.isArray(address)) continue;
    for (const [k, v] of Object.entries(address as Record<string, unknown>)) out[`${part}.${k}`] = text(v);
    out[`${part}.streetl`] = out[`${part}.street1`] ?? "";
  }
  return out;
}

function entries(list: readonly Entry[], prefix: string, ignored: ReadonlySet<string>): Entry[] {
  if (ignored.size === 0) return list.map((e) => ({ ...e }));
  return list.map((e) => Object.fromEntries(Object.entries(e).filter(([f]) => !ignored.has(`${prefix}.${f}`))));
}

export interface OrderPlanInput {
  draft: OrderDraft;
  /** The order the service holds, when the file's identifier found one. */
  service: Order | undefined;
  /** Run diff: what this automation last applied for the identifier. */
  snapshot: Record<string, string> | undefined;
}

export function planOrder(config: OrderPlanConfig, input: OrderPlanInput): OrderPlan {
  const { draft, service } = input;
  const base = { identifier: draft.identifier, line: draft.lines[0] ?? null };
  const values = orderScalars(draft);
  const fields = Object.keys(values).filter((f) => f !== config.identifier && !KEYS.has(f));
  const items = entries(draft.items, "items", draft.ignored);
  const shipments = entries(draft.shipments.map(shipmentEntry), "shipments", draft.ignored);
  const refunds = entries(draft.refunds, "refunds", draft.ignored);

  if (service) {
    if (!config.update) return { op: { ...base, kind: "skipped", action: null, changes: [], reason: "the service has this order, and the file config has no update" } };
    const before = serviceScalars(service);
    const changes: FieldChange[] = changedFields(values, fields, { snapshot: input.snapshot, live: { values: before, ...config.liveDiff }, before });
    const scalars = Object.fromEntries(changes.map((c) => [c.field, c.after]));
    const lists = {
      items: matchList("items", items, serviceEntries(service, "items")),
      shipments: matchList("shipments", shipments, serviceEntries(service, "shipments")),
      refunds: matchList("refunds", refunds, serviceEntries(service, "refunds")),
    };
    changes.push(...lists.items.changes, ...lists.shipments.changes, ...lists.refunds.changes);
    if (changes.length === 0) return { op: { ...base, kind: "unchanged", action: null, changes } };
    const write: OrderWrite = {
      action: "update",
      identifier: draft.identifier,
      oid: text(service.oid),
      scalars,
      items: lists.items.send,
      shipments: lists.shipments.send,
      refunds: lists.refunds.send,
      adds: lists.items.adds || lists.shipments.adds || lists.refunds.adds,
    };
    return { op: { ...base, kind: "update", action: "update", changes }, write };
  }

  if (!config.create) return { op: { ...base, kind: "skipped", action: null, changes: [], reason: "the service has no such order, and the file config has no create" } };
  // A created order gets a new oid, so the next run would not find it by the file's oid and create it again.
  if (config.identifier === "oid") return { op: { ...base, kind: "skipped", action: null, changes: [], reason: "the service has no order with this oid; orders identified by oid cannot be created (identify them by order or ordernumber)" } };
  if (!(values.ordernumber ?? "").trim()) return { error: `the service has no order "${draft.identifier}" and creating one needs an ordernumber: map a column to ordernumber` };
  const createFields = Object.keys(values).filter((f) => !KEYS.has(f));
  const scalars = Object.fromEntries(createFields.map((f) => [f, values[f] ?? ""]));
  const lists = { items: matchList("items", items, []), shipments: matchList("shipments", shipments, []), refunds: matchList("refunds", refunds, []) };
  const changes: FieldChange[] = [
    ...createFields.map((field) => ({ field, before: null, after: values[field] ?? "" })),
    ...lists.items.changes,
    ...lists.shipments.changes,
    ...lists.refunds.changes,
  ];
  const write: OrderWrite = { action: "create", identifier: draft.identifier, oid: null, scalars, items: lists.items.send, shipments: lists.shipments.send, refunds: lists.refunds.send, adds: true };
  return { op: { ...base, kind: "create", action: "create", changes }, write };
}

/** An order in `search` scope the file does not name, when the file config removes (archives). */
export function planArchive(identifier: string, oid: string): { op: PlannedOp; write: OrderWrite } {
  return {
    op: { kind: "remove", action: "archive", identifier, line: null, changes: [] },
    write: { action: "archive", identifier, oid, scalars: {}, items: [], shipments: [], refunds: [], adds: false },
  };
}
