/**
 * The daemon's own tables: accounts, automation definitions, alert
 * bookkeeping and a few flags. They sit next to the state store's tables in
 * the same database: the SQLite file of the data folder, or the PostgreSQL
 * schema every daemon of a cluster shares, so the automations API answers the
 * same from any of them. Every method is async so both fit, except those of
 * the SQLite-only queue journal (daemon-db-queue.ts says why).
 */

import type { DefinitionStore } from "./definitions-store.js";
import type { QueueJournal } from "./daemon-db-queue.js";
import type { EventStore } from "../events/store.js";

export interface AccountRow {
  api_user: string;
  /** Encrypted with the worker's secret key; never the plain token. */
  token: string;
  created: string;
  origin: string;
}

export interface AccountRows {
  /** Inserts, or replaces the token and origin of an existing user (keeping its `created`). */
  upsert(row: AccountRow): Promise<void>;
  delete(apiUser: string): Promise<boolean>;
  /** Ordered by API user. */
  list(): Promise<Array<Omit<AccountRow, "token">>>;
  token(apiUser: string): Promise<string | null>;
}

/** A console session (src/console/session-store.ts): only hashes of its secrets are kept. */
export interface SessionRow {
  /** sha256 (hex) of the session token the browser's cookie holds. */
  id_hash: string;
  account: string;
  /** HMAC of the API token the session signed in with, keyed by the session token: a changed token ends the session. */
  token_mac: string;
  created: string;
  expires: string;
  last_seen: string;
}

export interface SessionRows {
  insert(row: SessionRow): Promise<void>;
  get(idHash: string): Promise<SessionRow | null>;
  touch(idHash: string, lastSeen: string): Promise<void>;
  delete(idHash: string): Promise<boolean>;
  /** Removes the sessions that expired before `now` (ISO); returns how many. */
  prune(now: string): Promise<number>;
}

export interface DaemonDb {
  accounts: AccountRows;
  sessions: SessionRows;
  definitions: DefinitionStore;
  /** The runs this daemon's queue accepted and that have not ended; null with PostgreSQL, whose cluster queue keeps them. */
  queue: QueueJournal | null;
  /** Webhook events, their claims and the registered endpoints (src/events/). */
  events: EventStore;
  /** The reference of the last alert of this kind sent for the automation (silence: the time the feed was last seen). */
  alertRef(automation: string, kind: string): Promise<string | null>;
  setAlert(automation: string, kind: string, ref: string, sent: string): Promise<void>;
  metaGet(key: string): Promise<string | null>;
  metaSet(key: string, value: string): Promise<void>;
  /** Stores the value unless the key has one; returns the value stored now (the first writer's). */
  metaInit(key: string, value: string): Promise<string>;
  close(): Promise<void>;
}
