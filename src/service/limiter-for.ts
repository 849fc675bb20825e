import type { Settings } from "../config.js";
import type { Logger } from "../log.js";
import { isPostgresUrl } from "../state/pg-connect.js";
import { sharedLimiter, type RateLimiter } from "./limiter.js";
import { PostgresLimiter } from "./pg-limiter.js";
import { openSharedPool } from "./pg-pool.js";

export interface OpenedLimiter {
  limiter: RateLimiter;
  close(): Promise<void>;
}

/**
 * The rate limiter the settings ask for: with a PostgreSQL database every
 * process on it (daemons and `conveyor run`) shares one budget per account
 * through the database; otherwise the process-wide token bucket.
 */
export async function openLimiter(settings: Pick<Settings, "databaseUrl" | "readLimit" | "writeLimit">, logger: Logger): Promise<OpenedLimiter> {
  const limits = { read: settings.readLimit, write: settings.writeLimit };
  if (!settings.databaseUrl || !isPostgresUrl(settings.databaseUrl)) return { limiter: sharedLimiter(limits), close: async () => undefined };
  const { pool } = await openSharedPool(settings.databaseUrl, { max: 2, name: "conveyor-limiter" });
  return { limiter: new PostgresLimiter(pool, { limits, logger }), close: () => pool.end() };
}
