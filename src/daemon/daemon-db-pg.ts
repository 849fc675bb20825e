import type pg from "pg";
import type { AccountRow, AccountRows, DaemonDb, SessionRows } from "./daemon-db-types.js";
import { PgSessionRows } from "./session-rows.js";
import { PgDefinitionStore } from "./definitions-store-pg.js";
import { PgEventStore } from "../events/store-pg.js";

class PgAccountRows implements AccountRows {
  constructor(private readonly pool: pg.Pool) {}

  async upsert(row: AccountRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO daemon_accounts (api_user, token, created, origin) VALUES ($1, $2, $3, $4)
       ON CONFLICT (api_user) DO UPDATE SET token = excluded.token, origin = excluded.origin`,
      [row.api_user, row.token, row.created, row.origin],
    );
  }

  async delete(apiUser: string): Promise<boolean> {
    return ((await this.pool.query("DELETE FROM daemon_accounts WHERE api_user = $1", [apiUser])).rowCount ?? 0) > 0;
  }

  async list(): Promise<Array<Omit<AccountRow, "token">>> {
    // Byte order, as SQLite sorts, whatever the database's locale.
    const { rows } = await this.pool.query<Omit<AccountRow, "token">>('SELECT api_user, created, origin FROM daemon_accounts ORDER BY api_user COLLATE "C"');
    return rows;
  }

  async token(apiUser: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ token: string }>("SELECT token FROM daemon_accounts WHERE api_user = $1", [apiUser]);
    return rows[0]?.token ?? null;
  }
}

/**
 * The daemon's tables in the PostgreSQL schema of the state store, on its
 * pool: their schema is migrated with the store's (pg-migrations.ts), and the
 * store's `close` ends the pool, so `close` here has nothing of its own to end.
 */
export class PgDaemonDb implements DaemonDb {
  readonly accounts: AccountRows;
  readonly sessions: SessionRows;
  readonly definitions: PgDefinitionStore;
  /** The cluster's shared queue (pg-boss) keeps waiting runs across restarts. */
  readonly queue = null;
  readonly events: PgEventStore;

  constructor(private readonly pool: pg.Pool) {
    this.accounts = new PgAccountRows(pool);
    this.sessions = new PgSessionRows(pool);
    this.definitions = new PgDefinitionStore(pool);
    this.events = new PgEventStore(pool);
  }

  async alertRef(automation: string, kind: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ ref: string }>("SELECT ref FROM daemon_alerts WHERE automation = $1 AND kind = $2", [automation, kind]);
    return rows[0]?.ref ?? null;
  }

  async setAlert(automation: string, kind: string, ref: string, sent: string): Promise<void> {
    await this.pool.query(
      "INSERT INTO daemon_alerts (automation, kind, ref, sent) VALUES ($1, $2, $3, $4) ON CONFLICT (automation, kind) DO UPDATE SET ref = excluded.ref, sent = excluded.sent",
      [automation, kind, ref, sent],
    );
  }

  async metaGet(key: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ value: string }>("SELECT value FROM daemon_meta WHERE key = $1", [key]);
    return rows[0]?.value ?? null;
  }

  async metaSet(key: string, value: string): Promise<void> {
    await this.pool.query("INSERT INTO daemon_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, value]);
  }

  async metaInit(key: string, value: string): Promise<string> {
    await this.pool.query("INSERT INTO daemon_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value]);
    return (await this.metaGet(key)) ?? value;
  }

  async close(): Promise<void> {
    // The pool belongs to the state store.
  }
}
