import path from "node:path";
import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { SqliteStore } from "./sqlite.js";
import type { StateStore } from "./types.js";

export * from "./types.js";
export { deriveStatus } from "./status.js";

/** The state store the settings ask for: SQLite in the data folder unless a PostgreSQL URL is set. */
export function openStore(settings: Pick<Settings, "dataDir" | "databaseUrl">): StateStore {
  const url = settings.databaseUrl;
  if (!url) return new SqliteStore(path.join(settings.dataDir, "state.db"));
  if (url.startsWith("sqlite:")) return new SqliteStore(path.resolve(url.slice("sqlite:".length)));
  throw new ConveyorError("settings_invalid", `CONVEYOR_DATABASE_URL: this build keeps state in SQLite only; unset it or use sqlite:<file>`, {
    hint: "PostgreSQL state for several daemons is not available yet",
  });
}
