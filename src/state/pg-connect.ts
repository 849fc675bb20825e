import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { maskSecrets, registerSecret } from "../secrets.js";
import { CONNECT_RETRY, withRetry } from "../retry.js";
import { migrate, quoteIdent } from "./pg-migrations.js";

export interface PgOptions {
  /** The schema every table lives in; `?schema=` in the URL, default `conveyor`. */
  schema?: string;
  /** Connections this process may hold; `?pool_size=` in the URL, default 10. */
  poolSize?: number;
  /** The data folder: a debug file too large for the database is read from its run folder here. */
  dataDir?: string;
  /** Largest debug file kept in the database (default 64 MiB). */
  debugFileLimitBytes?: number;
}

export interface PgTarget {
  connectionString: string;
  schema: string;
  poolSize: number;
  /** host:port/database, for messages: never the user's password. */
  where: string;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * Reads our own parameters (`schema`, `pool_size`) off the URL and leaves the
 * rest for node-postgres (sslmode, application_name, …). The password is
 * registered as a secret the moment it is read.
 */
export function parsePgUrl(url: string, options: PgOptions = {}): PgTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConveyorError("settings_invalid", "CONVEYOR_DATABASE_URL is not a valid URL", { hint: "write it as postgres://user:password@host:5432/database" });
  }
  if (parsed.password) registerSecret(decodeURIComponent(parsed.password));
  const schema = options.schema ?? parsed.searchParams.get("schema") ?? "conveyor";
  if (!SCHEMA.test(schema)) {
    throw new ConveyorError("settings_invalid", `CONVEYOR_DATABASE_URL: schema "${schema}" is not allowed: use 1–63 lower-case letters, digits or "_", not starting with a digit`);
  }
  const rawPool = parsed.searchParams.get("pool_size");
  const poolSize = options.poolSize ?? (rawPool === null ? 10 : Number(rawPool));
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000) {
    throw new ConveyorError("settings_invalid", `CONVEYOR_DATABASE_URL: pool_size must be a whole number from 1 to 1000, not ${String(rawPool)}`);
  }
  parsed.searchParams.delete("schema");
  parsed.searchParams.delete("pool_size");
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default database)";
  return { connectionString: parsed.toString(), schema, poolSize, where: `${parsed.hostname}:${parsed.port || "5432"}/${database}` };
}

function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  // Refused, reset or timed out, or the server starting up or shutting down (57P03, 57P01, 53300 too many clients).
  return ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "57P03", "57P01", "53300"].includes(String(code));
}

/**
 * A pool on the target with the schema as every connection's search_path, and
 * the schema brought up to date before the pool is handed out.
 */
export async function openPgPool(target: PgTarget): Promise<pg.Pool> {
  // pg loads with a PostgreSQL state URL only: SQLite state, the default, never needs it.
  const { Pool } = (await import("pg")).default;
  const pool = new Pool({
    connectionString: target.connectionString,
    max: target.poolSize,
    options: `-c search_path=${quoteIdent(target.schema)}`,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection dropped by the server (restart, failover) must not crash the daemon; the next query reconnects.
  pool.on("error", () => undefined);
  try {
    await withRetry(async () => {
      const client = await pool.connect().catch((err: unknown) => {
        throw new ConveyorError("state", `cannot connect to PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
          retryable: isTransient(err),
          cause: err,
          hint: "check CONVEYOR_DATABASE_URL (host, port, database, user, password) and that the server accepts connections from this machine",
        });
      });
      try {
        await migrate(client, target.schema);
      } catch (err) {
        throw new ConveyorError("state", `cannot prepare schema "${target.schema}" in PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
          retryable: isTransient(err),
          cause: err,
          hint: "the user needs CREATE on the database (or on an existing schema of that name); PostgreSQL 13 or newer",
        });
      } finally {
        client.release();
      }
    }, CONNECT_RETRY);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return pool;
}

/** Runs `body` in one transaction on one connection; rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Creates tables outside the migrations (the cluster's, the shared rate
 * limiter's) under a transaction-scoped advisory lock, so daemons starting
 * together take turns; a failure is a `state` error naming `what`.
 */
export async function createTablesLocked(pool: pg.Pool, lock: string, sql: string, what: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [lock]);
    await client.query(sql);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw new ConveyorError("state", `cannot create ${what} in PostgreSQL: ${(err as Error).message}`, {
      cause: err,
      hint: "the database user needs CREATE on the schema named in CONVEYOR_DATABASE_URL",
    });
  } finally {
    client.release();
  }
}
