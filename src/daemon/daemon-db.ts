import { createHmac } from "node:crypto";
import path from "node:path";
import { ConveyorError } from "../errors.js";
import { isPostgresUrl, PostgresStore, type StateStore } from "../state/index.js";
import { PgDaemonDb } from "./daemon-db-pg.js";
import { SqliteDaemonDb } from "./daemon-db-sqlite.js";
import type { DaemonDb } from "./daemon-db-types.js";

export type { AccountRow, AccountRows, DaemonDb, SessionRow, SessionRows } from "./daemon-db-types.js";

/** The state database file the store uses: `<dataDir>/state.db`, or the file of a `sqlite:` URL. */
export function stateDbFile(settings: { dataDir: string; databaseUrl: string | undefined }): string {
  const url = settings.databaseUrl;
  if (url?.startsWith("sqlite:")) return path.resolve(url.slice("sqlite:".length));
  if (url) throw new ConveyorError("settings_invalid", "CONVEYOR_DATABASE_URL: only a sqlite: URL names a state file");
  return path.join(settings.dataDir, "state.db");
}

/**
 * The daemon's tables in the database the state store uses. On PostgreSQL they
 * share the store's connection pool (their schema is migrated with the
 * store's), so closing the store closes them too.
 */
export function openDaemonDb(settings: { dataDir: string; databaseUrl: string | undefined }, store: StateStore): DaemonDb {
  if (store instanceof PostgresStore) return new PgDaemonDb(store.pool);
  if (settings.databaseUrl && isPostgresUrl(settings.databaseUrl)) {
    throw new ConveyorError("internal", "the daemon's tables were asked for on a store that is not the PostgreSQL store of the settings");
  }
  return SqliteDaemonDb.open(stateDbFile(settings));
}

/**
 * Daemons sharing a database must share the secret key too: each encrypts
 * tokens and parameters another one decrypts. The first daemon leaves a
 * fingerprint of its key (an HMAC, which does not reveal the key); one
 * starting with a different key stops with the reason instead of failing on
 * every encrypted value later.
 */
export async function checkSharedSecretKey(db: DaemonDb, key: Buffer): Promise<void> {
  const mine = createHmac("sha256", key).update("conveyor secret key fingerprint").digest("hex").slice(0, 32);
  const stored = await db.metaInit("secret_key_fingerprint", mine);
  if (stored !== mine) {
    throw new ConveyorError("secret_key", "this daemon's secret key is not the one the shared database was written with", {
      hint: "give every daemon on the database the same CONVEYOR_SECRET_KEY (the key file of the first daemon's data folder holds it)",
    });
  }
}
