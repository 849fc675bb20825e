import type { Db } from "./db.js";

/** An order line as stored: string fields plus `itemdetails`. */
export interface StoredItem {
  fields: Record<string, string>;
  product: Record<string, string>;
}

/** An order as stored; `oid`, `order` and `archived` live in their own columns too, for lookups. */
export interface OrderData {
  fields: Record<string, string>;
  billing: Record<string, string>;
  shipping: Record<string, string>;
  items: StoredItem[];
  shipments: Record<string, string>[];
  refunds: Record<string, string>[];
  details: Record<string, unknown>;
  internalnotes: Record<string, string>;
  meta: unknown[];
}

export interface StoredOrder extends OrderData {
  oid: number;
}

interface Row {
  oid: number;
  data: string;
}

function toOrder(row: Row): StoredOrder {
  return { ...(JSON.parse(row.data) as OrderData), oid: row.oid };
}

/** Keys of the order fields SQLite may sort by. */
export const ORDER_SORT_KEYS = [
  "oid", "order", "ordernumber", "channel", "date", "dateutc", "dateupdated", "dateupdatedutc", "paymentdate",
  "total", "status", "paymentstatus", "shippingstatus", "email",
] as const;

/** Told of every stored change of an order, inside the change's transaction (webhook events). */
export type OrderListener = (before: StoredOrder | undefined, after: StoredOrder) => void;

/**
 * Orders in SQLite: the record as JSON, `oid` autoincrement, `order` indexed.
 * Every change goes through `insert` or `save`, so the listener sees every
 * operation (create, update, archive, combine, split) without each naming it.
 */
export class OrderStore {
  private listener: OrderListener | null = null;

  constructor(private readonly db: Db) {}

  listen(listener: OrderListener): void {
    this.listener = listener;
  }

  get(oid: number): StoredOrder | undefined {
    const row = this.db.prepare("SELECT oid, data FROM orders WHERE oid = ?").get(oid) as Row | undefined;
    return row && toOrder(row);
  }

  /** By `order` (channel + ordernumber); an active order wins over archived ones of the same name. */
  byOrder(order: string): StoredOrder | undefined {
    const row = this.db.prepare("SELECT oid, data FROM orders WHERE ord = ? ORDER BY archived, oid DESC LIMIT 1").get(order) as Row | undefined;
    return row && toOrder(row);
  }

  /** By a path or body identifier: digits are an oid, anything else an `order` string. */
  resolve(id: string): StoredOrder | undefined {
    return /^\d+$/.test(id) ? this.get(Number(id)) : this.byOrder(id);
  }

  activeExists(order: string): boolean {
    return this.db.prepare("SELECT 1 FROM orders WHERE ord = ? AND archived = 0 LIMIT 1").get(order) !== undefined;
  }

  insert(data: OrderData): number {
    const info = this.db
      .prepare("INSERT INTO orders (ord, channel, archived, data) VALUES (?, ?, ?, ?)")
      .run(data.fields.order ?? "", data.fields.channel ?? "", data.fields.archived === "1" ? 1 : 0, JSON.stringify(data));
    const oid = Number(info.lastInsertRowid);
    this.listener?.(undefined, { ...data, oid });
    return oid;
  }

  save(order: StoredOrder): void {
    const { oid, ...data } = order;
    const before = this.listener ? this.get(oid) : undefined;
    this.db
      .prepare("UPDATE orders SET ord = ?, channel = ?, archived = ?, data = ? WHERE oid = ?")
      .run(data.fields.order ?? "", data.fields.channel ?? "", data.fields.archived === "1" ? 1 : 0, JSON.stringify(data), oid);
    this.listener?.(before, order);
  }

  /** A new id for an order line, shipment or refund, unique in the account. */
  nextId(kind: "itemid" | "shipid" | "refundid"): string {
    const key = `next_${kind}`;
    this.db.prepare("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1").run(key);
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string }).value;
  }

  /** Orders sorted by one key; SQLite sorts, JavaScript iterates. */
  *sorted(key: string, descending: boolean): Generator<StoredOrder> {
    const safe = key.replace(/[^a-z0-9_]/gi, "");
    const column = safe === "oid" ? "oid" : safe === "total" ? "CAST(json_extract(data, '$.fields.total') AS REAL)" : `json_extract(data, '$.fields.${safe}') COLLATE NOCASE`;
    const dir = descending ? "DESC" : "ASC";
    for (const row of this.db.prepare(`SELECT oid, data FROM orders ORDER BY ${column} ${dir}, oid ${dir}`).iterate() as IterableIterator<Row>) {
      yield toOrder(row);
    }
  }

  /** Every order in oid order, in batches (exports). */
  async *scan(batch = 500): AsyncGenerator<StoredOrder> {
    const page = this.db.prepare("SELECT oid, data FROM orders WHERE oid > ? ORDER BY oid LIMIT ?");
    let last = 0;
    for (;;) {
      const rows = page.all(last, batch) as Row[];
      for (const row of rows) yield toOrder(row);
      const tail = rows[rows.length - 1];
      if (!tail || rows.length < batch) return;
      last = tail.oid;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
