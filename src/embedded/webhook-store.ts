import type { Database as Db } from "better-sqlite3";

/**
 * Webhook endpoints, messages and deliveries in the service's SQLite file, so
 * a restart resumes the deliveries it owed. A delivery is one message to one
 * endpoint (`{msgId}_{endpointId}`, the id of the retry route) with its
 * attempts.
 */
export const WEBHOOK_SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id TEXT PRIMARY KEY, url TEXT NOT NULL, description TEXT NOT NULL, event_types TEXT NOT NULL,
  enabled INTEGER NOT NULL, secret TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_messages (id TEXT PRIMARY KEY, event_type TEXT NOT NULL, payload TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  msg_id TEXT NOT NULL, endpoint_id TEXT NOT NULL, event_type TEXT NOT NULL, status TEXT NOT NULL,
  attempts TEXT NOT NULL, next_at INTEGER, created TEXT NOT NULL, PRIMARY KEY (msg_id, endpoint_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries(status, next_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created);
`;

export interface Endpoint {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  secret: string;
  created: string;
  updated: string;
}

export interface Attempt {
  attempt: number;
  status: "success" | "failed";
  http_status: number | null;
  response_time_ms: number;
  timestamp: string;
  response_body: string;
  error?: string;
}

export type DeliveryStatus = "pending" | "success" | "failed";

export interface Delivery {
  msgId: string;
  endpointId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: Attempt[];
  nextAt: number | null;
  created: string;
}

interface EndpointRow {
  id: string;
  url: string;
  description: string;
  event_types: string;
  enabled: number;
  secret: string;
  created: string;
  updated: string;
}

interface DeliveryRow {
  msg_id: string;
  endpoint_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: string;
  next_at: number | null;
  created: string;
}

const toEndpoint = (r: EndpointRow): Endpoint => ({ id: r.id, url: r.url, description: r.description, eventTypes: JSON.parse(r.event_types) as string[], enabled: r.enabled === 1, secret: r.secret, created: r.created, updated: r.updated });
const toDelivery = (r: DeliveryRow): Delivery => ({ msgId: r.msg_id, endpointId: r.endpoint_id, eventType: r.event_type, status: r.status, attempts: JSON.parse(r.attempts) as Attempt[], nextAt: r.next_at, created: r.created });

export interface DeliveryFilter {
  status?: string | undefined;
  eventType?: string | undefined;
  before?: string | undefined;
  after?: string | undefined;
  limit: number;
  offset: number;
}

export class WebhookStore {
  constructor(private readonly db: Db) {}

  endpoints(): Endpoint[] {
    return (this.db.prepare("SELECT * FROM webhook_endpoints ORDER BY created, id").all() as EndpointRow[]).map(toEndpoint);
  }

  endpoint(id: string): Endpoint | undefined {
    const row = this.db.prepare("SELECT * FROM webhook_endpoints WHERE id = ?").get(id) as EndpointRow | undefined;
    return row && toEndpoint(row);
  }

  saveEndpoint(e: Endpoint): void {
    this.db
      .prepare("INSERT INTO webhook_endpoints (id, url, description, event_types, enabled, secret, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET url = excluded.url, description = excluded.description, event_types = excluded.event_types, enabled = excluded.enabled, secret = excluded.secret, updated = excluded.updated")
      .run(e.id, e.url, e.description, JSON.stringify(e.eventTypes), e.enabled ? 1 : 0, e.secret, e.created, e.updated);
  }

  /** Permanent: the endpoint and its deliveries. */
  deleteEndpoint(id: string): boolean {
    return this.db.transaction(() => {
      this.db.prepare("DELETE FROM webhook_deliveries WHERE endpoint_id = ?").run(id);
      return this.db.prepare("DELETE FROM webhook_endpoints WHERE id = ?").run(id).changes > 0;
    })();
  }

  addMessage(id: string, eventType: string, payload: string, created: string): void {
    this.db.prepare("INSERT INTO webhook_messages (id, event_type, payload, created) VALUES (?, ?, ?, ?)").run(id, eventType, payload, created);
  }

  payload(msgId: string): string | undefined {
    return (this.db.prepare("SELECT payload FROM webhook_messages WHERE id = ?").get(msgId) as { payload: string } | undefined)?.payload;
  }

  addDelivery(msgId: string, endpointId: string, eventType: string, created: string, nextAt: number): void {
    this.db.prepare("INSERT INTO webhook_deliveries (msg_id, endpoint_id, event_type, status, attempts, next_at, created) VALUES (?, ?, ?, 'pending', '[]', ?, ?)").run(msgId, endpointId, eventType, nextAt, created);
  }

  delivery(msgId: string, endpointId: string): Delivery | undefined {
    const row = this.db.prepare("SELECT * FROM webhook_deliveries WHERE msg_id = ? AND endpoint_id = ?").get(msgId, endpointId) as DeliveryRow | undefined;
    return row && toDelivery(row);
  }

  saveDelivery(d: Delivery): void {
    this.db.prepare("UPDATE webhook_deliveries SET status = ?, attempts = ?, next_at = ? WHERE msg_id = ? AND endpoint_id = ?").run(d.status, JSON.stringify(d.attempts), d.nextAt, d.msgId, d.endpointId);
  }

  due(now: number): Delivery[] {
    return (this.db.prepare("SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ? ORDER BY next_at LIMIT 100").all(now) as DeliveryRow[]).map(toDelivery);
  }

  nextDue(): number | null {
    return (this.db.prepare("SELECT MIN(next_at) AS at FROM webhook_deliveries WHERE status = 'pending'").get() as { at: number | null }).at;
  }

  /** An endpoint's deliveries, newest first, and how many match in all. */
  deliveries(endpointId: string, f: DeliveryFilter): { total: number; deliveries: Delivery[] } {
    const conditions: Array<[string, string | undefined]> = [["status = ?", f.status], ["event_type = ?", f.eventType], ["created < ?", f.before], ["created > ?", f.after]];
    const used = conditions.filter((c): c is [string, string] => Boolean(c[1]));
    const clause = ["endpoint_id = ?", ...used.map((c) => c[0])].join(" AND ");
    const args = [endpointId, ...used.map((c) => c[1])];
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${clause}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM webhook_deliveries WHERE ${clause} ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, f.limit, f.offset) as DeliveryRow[];
    return { total, deliveries: rows.map(toDelivery) };
  }

  /** Counts by status and event type since `since` (ISO), of one endpoint or all. */
  counts(since: string, endpointId?: string): Array<{ event_type: string; status: DeliveryStatus; n: number }> {
    const sql = `SELECT event_type, status, COUNT(*) AS n FROM webhook_deliveries WHERE created >= ?${endpointId ? " AND endpoint_id = ?" : ""} GROUP BY event_type, status`;
    return this.db.prepare(sql).all(...(endpointId ? [since, endpointId] : [since])) as Array<{ event_type: string; status: DeliveryStatus; n: number }>;
  }
}
