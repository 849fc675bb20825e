import path from "node:path";
import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { isPostgresUrl } from "./pg-connect.js";
import { PostgresStore } from "./postgres.js";
import { tightenDataDir } from "./private-files.js";
import { SqliteStore } from "./sqlite.js";
import type { StateStore } from "./types.js";

export * from "./types.js";
export { deriveStatus } from "./status.js";
export { isDebugFileName } from "./debug-files.js";
export { isPostgresUrl } from "./pg-connect.js";
export { describeHolder, holdAutomation, lockHolder, waitForAutomation, LOCK_LEASE_MS, type HeldLock } from "./automation-lock.js";
export { PostgresStore } from "./postgres.js";

/**
 * The state store the settings ask for: SQLite in the data folder unless the
 * URL says otherwise. Async because a PostgreSQL store connects and migrates
 * its schema before it is handed out: a daemon that cannot reach its database
 * stops at start with the reason, not at its first run.
 */
export async function openStore(settings: Pick<Settings, "dataDir" | "databaseUrl"> & Partial<Pick<Settings, "debugFileLimitMb">>): Promise<StateStore> {
  const url = settings.databaseUrl;
  // Whatever the database, the data folder keeps the key, the run folders and the debug files.
  tightenDataDir(settings.dataDir);
  if (!url) return new SqliteStore(path.join(settings.dataDir, "state.db"), { dataDir: settings.dataDir });
  if (url.startsWith("sqlite:")) return new SqliteStore(path.resolve(url.slice("sqlite:".length)), { dataDir: settings.dataDir });
  if (isPostgresUrl(url)) return PostgresStore.open(url, { dataDir: settings.dataDir, ...(settings.debugFileLimitMb ? { debugFileLimitBytes: settings.debugFileLimitMb * 2 ** 20 } : {}) });
  throw new ConveyorError("settings_invalid", "CONVEYOR_DATABASE_URL must be postgres://… (or postgresql://…) or sqlite:<file>", {
    hint: "unset it to keep the state in SQLite in the data folder",
  });
}
