/**
 * Cuts order writes into the bulk bodies of step 8: `{header, data}` for
 * `POST /v3/orders` (create), `PATCH /v3/orders` (update) and `DELETE
 * /v3/orders` (archive). One order is one or more rows: the first carries the
 * order fields, each row one line item, shipment and refund (dotted headers
 * such as `items.sku`), and every row the order's key (`oid`; for a create
 * `ordernumber` and `channel`) so the service groups them back.
 *
 * As with product bulk files, bodies are grouped by action and by the exact
 * set of columns, so an order never carries a column it does not mean to set,
 * and cut at `bulk_rows` rows or `MAX_ORDERS_PER_BODY` orders, whichever comes
 * first (an order's rows are never split). The service answers per order,
 * `failed` keyed by the order's index in the body.
 *
 * @module
 */

import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { OrderBulk } from "../../service/index.js";
import type { Entry } from "./order-lines.js";
import type { OrderWrite } from "./plan-orders.js";
import type { OrderAction } from "../planned-op.js";

export const MAX_ORDERS_PER_BODY = 200;

export interface OrderBody {
  /** `bulk-<n>.json`: the debug file, and the `request_id` of the log records. */
  name: string;
  path: string;
  action: OrderAction;
  body: OrderBulk;
  /** The orders in the body, in the order the service indexes them. */
  orders: OrderWrite[];
  /** False when a write adds entries without an id: repeating it would add them twice. */
  idempotent: boolean;
}

type Row = Record<string, unknown>;

interface OpenBody {
  body: OrderBody;
  rows: Row[];
}

function prefixed(list: string, entry: Entry | undefined): Row {
  const out: Row = {};
  if (entry) for (const [f, v] of Object.entries(entry)) out[`${list}.${f}`] = v;
  return out;
}

function parseItems(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/**
 * Shipped items are request parameters (seed part 2.3: `shipitems`, or
 * `shipskufield` with `shipskuvalue`), not shipment fields: one shipment's
 * items go as `shipitems`; when several shipments of one order carry items,
 * each gets them in its `shipdetails`, where the service keeps them.
 */
function shipmentParameters(shipments: Entry[]): { shipments: Entry[]; parameters: Row } {
  const parameters: Row = {};
  const withItems = shipments.filter((s) => s.shipitems !== undefined).length;
  const out = shipments.map((s) => {
    const { shipitems, shipskufield, shipskuvalue, ...fields } = s;
    if (shipskufield !== undefined && parameters.shipskufield === undefined) parameters.shipskufield = shipskufield;
    if (shipskuvalue !== undefined && parameters.shipskuvalue === undefined) parameters.shipskuvalue = shipskuvalue;
    if (shipitems !== undefined) {
      if (withItems === 1) parameters.shipitems = parseItems(shipitems);
      else if (fields.shipdetails === undefined) fields.shipdetails = JSON.stringify({ items: parseItems(shipitems) });
    }
    return fields;
  });
  return { shipments: out, parameters };
}

/** The rows of one order. */
export function orderRows(write: OrderWrite): Row[] {
  const key: Row = {};
  if (write.action === "create") {
    key.ordernumber = write.scalars.ordernumber ?? "";
    if (write.scalars.channel !== undefined) key.channel = write.scalars.channel;
  } else key.oid = write.oid ?? "";
  const { shipments, parameters } = shipmentParameters(write.shipments);
  const count = Math.max(1, write.items.length, shipments.length, write.refunds.length);
  const rows: Row[] = [];
  for (let i = 0; i < count; i++) {
    const row: Row = { ...key, ...(i === 0 ? { ...write.scalars, ...parameters } : {}) };
    Object.assign(row, prefixed("items", write.items[i]), prefixed("shipments", shipments[i]), prefixed("refunds", write.refunds[i]));
    rows.push(row);
  }
  return rows;
}

export class OrderBodyBatcher {
  private readonly open = new Map<string, OpenBody>();
  private readonly done: OrderBody[] = [];
  private count = 0;

  constructor(
    private readonly folder: string,
    private readonly bulkRows: number,
    private readonly maxOrders = MAX_ORDERS_PER_BODY,
  ) {}

  async add(write: OrderWrite): Promise<void> {
    const rows = orderRows(write);
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    const key = `${write.action}\u0000${[...columns].sort().join("\u0000")}`;
    let group = this.open.get(key);
    if (group && group.rows.length + rows.length > this.bulkRows) {
      this.open.delete(key);
      await this.seal(group);
      group = undefined;
    }
    if (!group) {
      this.count += 1;
      const name = `bulk-${this.count}.json`;
      group = { body: { name, path: path.join(this.folder, name), action: write.action, body: { header: columns, data: [] }, orders: [], idempotent: true }, rows: [] };
      this.open.set(key, group);
    }
    group.rows.push(...rows);
    group.body.orders.push(write);
    if (write.adds) group.body.idempotent = false;
    if (group.body.orders.length >= this.maxOrders || group.rows.length >= this.bulkRows) {
      this.open.delete(key);
      await this.seal(group);
    }
  }

  private async seal(group: OpenBody): Promise<void> {
    const header = group.body.body.header;
    group.body.body.data = group.rows.map((row) => header.map((c) => row[c] ?? ""));
    await writeFile(group.body.path, `${JSON.stringify(group.body.body)}\n`);
    this.done.push(group.body);
  }

  /** Writes every open body; the bodies in the order they were started. */
  async finish(): Promise<OrderBody[]> {
    for (const group of this.open.values()) await this.seal(group);
    this.open.clear();
    return [...this.done].sort((a, b) => Number(a.name.slice(5, -5)) - Number(b.name.slice(5, -5)));
  }
}
