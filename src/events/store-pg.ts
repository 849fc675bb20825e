import type pg from "pg";
import type { RunEvents } from "../daemon/types.js";
import { inTransaction } from "../state/pg-connect.js";
import { toClaim, toRegistration } from "./store-sqlite.js";
import { runEventsOf, type ClaimRow, type EventStore, type IncomingEvent, type Registration, type SettleResult } from "./store.js";

/** Held (session lock) by the one daemon of a cluster checking the endpoints. */
const REGISTRATION_LOCK = "conveyor.webhook_registration";

/**
 * The event tables in the cluster's PostgreSQL schema, on the state store's
 * pool. `take` is one statement: the pending rows are locked with SKIP
 * LOCKED, so daemons taking at once each get different claims and none
 * waits for another.
 */
export class PgEventStore implements EventStore {
  constructor(private readonly pool: pg.Pool) {}

  async record(event: IncomingEvent, automations: readonly string[]): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        "INSERT INTO webhook_events (account, event_id, webhook_id, type, order_id, body) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
        [event.account, event.eventId, event.webhookId, event.type, event.orderId, event.body],
      );
      if (inserted.rowCount !== 1) return false;
      if (automations.length > 0) {
        await client.query("INSERT INTO event_claims (account, event_id, automation, state) SELECT $1, $2, a, 'pending' FROM unnest($3::text[]) AS a ON CONFLICT DO NOTHING", [
          event.account,
          event.eventId,
          [...automations],
        ]);
      }
      return true;
    });
  }

  async take(automation: string, runId: string, max: number): Promise<RunEvents> {
    const { rows } = await this.pool.query<{ event_id: string; order_id: string | null }>(
      `WITH taken AS (
         UPDATE event_claims SET state = 'taken', run_id = $2, updated = now()
         WHERE ctid IN (SELECT ctid FROM event_claims WHERE automation = $1 AND state = 'pending' ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)
           AND state = 'pending'
         RETURNING seq, account, event_id)
       SELECT t.event_id, e.order_id FROM taken t JOIN webhook_events e USING (account, event_id) ORDER BY t.seq`,
      [automation, runId, max],
    );
    return runEventsOf(rows);
  }

  async settle(runId: string, done: boolean, maxAttempts: number): Promise<SettleResult> {
    if (done) {
      const r = await this.pool.query("UPDATE event_claims SET state = 'done', updated = now() WHERE run_id = $1 AND state = 'taken'", [runId]);
      return { settled: r.rowCount ?? 0, failed: [] };
    }
    const { rows } = await this.pool.query<{ event_id: string; state: string }>(
      `UPDATE event_claims SET attempts = attempts + 1, updated = now(), run_id = NULL,
         state = CASE WHEN attempts + 1 >= $2 THEN 'failed' ELSE 'pending' END
       WHERE run_id = $1 AND state = 'taken' RETURNING event_id, state`,
      [runId, maxAttempts],
    );
    return { settled: rows.length, failed: rows.filter((r) => r.state === "failed").map((r) => r.event_id) };
  }

  async takenRuns(): Promise<string[]> {
    const { rows } = await this.pool.query<{ run_id: string }>("SELECT DISTINCT run_id FROM event_claims WHERE state = 'taken' AND run_id IS NOT NULL");
    return rows.map((r) => r.run_id);
  }

  async pendingAutomations(): Promise<string[]> {
    const { rows } = await this.pool.query<{ automation: string }>("SELECT DISTINCT automation FROM event_claims WHERE state = 'pending'");
    return rows.map((r) => r.automation);
  }

  async hasPending(automation: string): Promise<boolean> {
    const r = await this.pool.query("SELECT 1 FROM event_claims WHERE automation = $1 AND state = 'pending' LIMIT 1", [automation]);
    return (r.rowCount ?? 0) > 0;
  }

  async dropPending(automation: string, before: Date): Promise<string[]> {
    const { rows } = await this.pool.query<{ event_id: string }>(
      "UPDATE event_claims SET state = 'failed', updated = now() WHERE automation = $1 AND state = 'pending' AND updated < $2 RETURNING event_id",
      [automation, before],
    );
    return rows.map((r) => r.event_id);
  }

  async claims(eventId?: string): Promise<ClaimRow[]> {
    const sql = `SELECT account, event_id, automation, state, run_id, attempts FROM event_claims${eventId === undefined ? "" : " WHERE event_id = $1"} ORDER BY seq`;
    const { rows } = await this.pool.query<Parameters<typeof toClaim>[0]>(sql, eventId === undefined ? [] : [eventId]);
    return rows.map(toClaim);
  }

  async prune(before: Date): Promise<number> {
    // The claims go with their event (ON DELETE CASCADE).
    const r = await this.pool.query(
      `DELETE FROM webhook_events e WHERE received < $1
       AND NOT EXISTS (SELECT 1 FROM event_claims c WHERE c.account = e.account AND c.event_id = e.event_id AND c.state IN ('pending', 'taken'))`,
      [before],
    );
    return r.rowCount ?? 0;
  }

  async runHeld(runId: string): Promise<boolean> {
    // run_waiting is the cluster's table: it exists once any daemon joined, which every daemon on PostgreSQL does before this is asked.
    const r = await this.pool.query("SELECT 1 FROM run_locks WHERE run_id = $1 UNION ALL SELECT 1 FROM run_waiting WHERE run_id = $1", [runId]);
    return (r.rowCount ?? 0) > 0;
  }

  async registration(account: string): Promise<Registration | null> {
    const { rows } = await this.pool.query<Parameters<typeof toRegistration>[0]>("SELECT * FROM daemon_webhooks WHERE account = $1", [account]);
    return rows[0] ? toRegistration(rows[0]) : null;
  }

  async registrationByKey(key: string): Promise<Registration | null> {
    const { rows } = await this.pool.query<Parameters<typeof toRegistration>[0]>("SELECT * FROM daemon_webhooks WHERE key = $1", [key]);
    return rows[0] ? toRegistration(rows[0]) : null;
  }

  async registrations(): Promise<Registration[]> {
    const { rows } = await this.pool.query<Parameters<typeof toRegistration>[0]>('SELECT * FROM daemon_webhooks ORDER BY account COLLATE "C"');
    return rows.map(toRegistration);
  }

  async saveRegistration(r: Registration): Promise<void> {
    await this.pool.query(
      `INSERT INTO daemon_webhooks (account, endpoint_id, key, url, event_types, secret, previous_secret, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (account) DO UPDATE SET endpoint_id = excluded.endpoint_id, key = excluded.key, url = excluded.url,
         event_types = excluded.event_types, secret = excluded.secret, previous_secret = excluded.previous_secret, updated = excluded.updated`,
      [r.account, r.endpointId, r.key, r.url, JSON.stringify(r.eventTypes), r.secret, r.previousSecret, r.updated],
    );
  }

  async deleteRegistration(account: string): Promise<void> {
    await this.pool.query("DELETE FROM daemon_webhooks WHERE account = $1", [account]);
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T | null> {
    const client = await this.pool.connect();
    try {
      const got = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [REGISTRATION_LOCK]);
      if (!got.rows[0]?.ok) return null;
      try {
        return await fn();
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext($1))", [REGISTRATION_LOCK]).catch(() => undefined);
      }
    } finally {
      client.release();
    }
  }
}
