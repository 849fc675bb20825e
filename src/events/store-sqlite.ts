import type Database from "better-sqlite3";
import type { RunEvents } from "../daemon/types.js";
import { runEventsOf, type ClaimRow, type EventStore, type IncomingEvent, type Registration, type SettleResult } from "./store.js";

/** The event tables in the daemon's SQLite file; created with IF NOT EXISTS beside the other `daemon_` tables. */
export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS webhook_events (account TEXT NOT NULL, event_id TEXT NOT NULL, webhook_id TEXT NOT NULL,
    type TEXT NOT NULL, order_id TEXT, received TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (account, event_id));
  CREATE UNIQUE INDEX IF NOT EXISTS webhook_events_by_webhook ON webhook_events (account, webhook_id);
  CREATE INDEX IF NOT EXISTS webhook_events_by_received ON webhook_events (received);
  CREATE TABLE IF NOT EXISTS event_claims (seq INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, event_id TEXT NOT NULL,
    automation TEXT NOT NULL, state TEXT NOT NULL, run_id TEXT, attempts INTEGER NOT NULL DEFAULT 0, updated TEXT NOT NULL,
    UNIQUE (account, event_id, automation));
  CREATE INDEX IF NOT EXISTS event_claims_by_state ON event_claims (automation, state, seq);
  CREATE INDEX IF NOT EXISTS event_claims_by_run ON event_claims (run_id);
  CREATE TABLE IF NOT EXISTS daemon_webhooks (account TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, key TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL, event_types TEXT NOT NULL, secret TEXT NOT NULL, previous_secret TEXT, updated TEXT NOT NULL) WITHOUT ROWID;`;

interface RegistrationRow {
  account: string;
  endpoint_id: string;
  key: string;
  url: string;
  event_types: string;
  secret: string;
  previous_secret: string | null;
  updated: string;
}

export function toRegistration(r: RegistrationRow): Registration {
  return { account: r.account, endpointId: r.endpoint_id, key: r.key, url: r.url, eventTypes: JSON.parse(r.event_types) as string[], secret: r.secret, previousSecret: r.previous_secret, updated: r.updated };
}

interface ClaimDbRow {
  account: string;
  event_id: string;
  automation: string;
  state: ClaimRow["state"];
  run_id: string | null;
  attempts: number;
}

export function toClaim(r: ClaimDbRow): ClaimRow {
  return { account: r.account, eventId: r.event_id, automation: r.automation, state: r.state, runId: r.run_id, attempts: Number(r.attempts) };
}

/**
 * One daemon per SQLite file, and better-sqlite3 is synchronous: a
 * transaction here is atomic for every caller of this process, which is all
 * the atomicity `take` needs.
 */
export class SqliteEventStore implements EventStore {
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async record(event: IncomingEvent, automations: readonly string[]): Promise<boolean> {
    const at = this.now().toISOString();
    return this.db.transaction(() => {
      const inserted = this.db
        .prepare("INSERT OR IGNORE INTO webhook_events (account, event_id, webhook_id, type, order_id, received, body) VALUES (?, ?, ?, ?, ?, ?, ?)")
        .run(event.account, event.eventId, event.webhookId, event.type, event.orderId, at, event.body);
      if (inserted.changes === 0) return false;
      const claim = this.db.prepare("INSERT OR IGNORE INTO event_claims (account, event_id, automation, state, updated) VALUES (?, ?, ?, 'pending', ?)");
      for (const automation of automations) claim.run(event.account, event.eventId, automation, at);
      return true;
    })();
  }

  async take(automation: string, runId: string, max: number): Promise<RunEvents> {
    const at = this.now().toISOString();
    const rows = this.db.transaction(() => {
      const taken = this.db
        .prepare(
          `UPDATE event_claims SET state = 'taken', run_id = ?, updated = ?
           WHERE seq IN (SELECT seq FROM event_claims WHERE automation = ? AND state = 'pending' ORDER BY seq LIMIT ?)
           RETURNING seq, account, event_id`,
        )
        .all(runId, at, automation, max) as Array<{ seq: number; account: string; event_id: string }>;
      taken.sort((a, b) => a.seq - b.seq);
      const order = this.db.prepare("SELECT order_id FROM webhook_events WHERE account = ? AND event_id = ?");
      return taken.map((t) => ({ event_id: t.event_id, order_id: (order.get(t.account, t.event_id) as { order_id: string | null } | undefined)?.order_id ?? null }));
    })();
    return runEventsOf(rows);
  }

  async settle(runId: string, done: boolean, maxAttempts: number): Promise<SettleResult> {
    const at = this.now().toISOString();
    return this.db.transaction(() => {
      if (done) return { settled: this.db.prepare("UPDATE event_claims SET state = 'done', updated = ? WHERE run_id = ? AND state = 'taken'").run(at, runId).changes, failed: [] };
      const rows = this.db
        .prepare(
          `UPDATE event_claims SET attempts = attempts + 1, updated = ?, run_id = NULL,
             state = CASE WHEN attempts + 1 >= ? THEN 'failed' ELSE 'pending' END
           WHERE run_id = ? AND state = 'taken' RETURNING event_id, state`,
        )
        .all(at, maxAttempts, runId) as Array<{ event_id: string; state: string }>;
      return { settled: rows.length, failed: rows.filter((r) => r.state === "failed").map((r) => r.event_id) };
    })();
  }

  async takenRuns(): Promise<string[]> {
    return (this.db.prepare("SELECT DISTINCT run_id FROM event_claims WHERE state = 'taken' AND run_id IS NOT NULL").all() as Array<{ run_id: string }>).map((r) => r.run_id);
  }

  async pendingAutomations(): Promise<string[]> {
    return (this.db.prepare("SELECT DISTINCT automation FROM event_claims WHERE state = 'pending'").all() as Array<{ automation: string }>).map((r) => r.automation);
  }

  async hasPending(automation: string): Promise<boolean> {
    return this.db.prepare("SELECT 1 FROM event_claims WHERE automation = ? AND state = 'pending' LIMIT 1").get(automation) !== undefined;
  }

  async dropPending(automation: string, before: Date): Promise<string[]> {
    const rows = this.db
      .prepare("UPDATE event_claims SET state = 'failed', updated = ? WHERE automation = ? AND state = 'pending' AND updated < ? RETURNING event_id")
      .all(this.now().toISOString(), automation, before.toISOString()) as Array<{ event_id: string }>;
    return rows.map((r) => r.event_id);
  }

  async claims(eventId?: string): Promise<ClaimRow[]> {
    const sql = `SELECT account, event_id, automation, state, run_id, attempts FROM event_claims${eventId === undefined ? "" : " WHERE event_id = ?"} ORDER BY seq`;
    const rows = (eventId === undefined ? this.db.prepare(sql).all() : this.db.prepare(sql).all(eventId)) as ClaimDbRow[];
    return rows.map(toClaim);
  }

  async prune(before: Date): Promise<number> {
    const cutoff = before.toISOString();
    return this.db.transaction(() => {
      const open = "SELECT 1 FROM event_claims c WHERE c.account = e.account AND c.event_id = e.event_id AND c.state IN ('pending', 'taken')";
      const gone = this.db.prepare(`DELETE FROM webhook_events AS e WHERE received < ? AND NOT EXISTS (${open}) RETURNING account, event_id`).all(cutoff) as Array<{ account: string; event_id: string }>;
      const claims = this.db.prepare("DELETE FROM event_claims WHERE account = ? AND event_id = ?");
      for (const g of gone) claims.run(g.account, g.event_id);
      return gone.length;
    })();
  }

  async runHeld(): Promise<boolean> {
    // One daemon per SQLite file: its own queue is the whole answer, and the caller asks it.
    return false;
  }

  async registration(account: string): Promise<Registration | null> {
    const row = this.db.prepare("SELECT * FROM daemon_webhooks WHERE account = ?").get(account) as RegistrationRow | undefined;
    return row ? toRegistration(row) : null;
  }

  async registrationByKey(key: string): Promise<Registration | null> {
    const row = this.db.prepare("SELECT * FROM daemon_webhooks WHERE key = ?").get(key) as RegistrationRow | undefined;
    return row ? toRegistration(row) : null;
  }

  async registrations(): Promise<Registration[]> {
    return (this.db.prepare("SELECT * FROM daemon_webhooks ORDER BY account").all() as RegistrationRow[]).map(toRegistration);
  }

  async saveRegistration(r: Registration): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO daemon_webhooks (account, endpoint_id, key, url, event_types, secret, previous_secret, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account) DO UPDATE SET endpoint_id = excluded.endpoint_id, key = excluded.key, url = excluded.url,
           event_types = excluded.event_types, secret = excluded.secret, previous_secret = excluded.previous_secret, updated = excluded.updated`,
      )
      .run(r.account, r.endpointId, r.key, r.url, JSON.stringify(r.eventTypes), r.secret, r.previousSecret, r.updated);
  }

  async deleteRegistration(account: string): Promise<void> {
    this.db.prepare("DELETE FROM daemon_webhooks WHERE account = ?").run(account);
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T | null> {
    // One after another within the process; there is no other daemon on this file.
    const result = this.lock.then(fn, fn);
    this.lock = result.catch(() => undefined);
    return result;
  }
}
