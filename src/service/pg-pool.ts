import type pg from "pg";
import { ConveyorError } from "../errors.js";
import { maskSecrets } from "../secrets.js";
import { parsePgUrl, type PgTarget } from "../state/pg-connect.js";
import { quoteIdent } from "../state/pg-migrations.js";

/**
 * A small pool for the cluster's own tables (rate limits, fire claims, run
 * locks) in the state store's schema (`?schema=` of CONVEYOR_DATABASE_URL).
 * Kept apart from the store's pool so a store busy with a big snapshot never
 * makes a rate-limit grant or a lease heartbeat wait for a connection.
 */
export async function openSharedPool(url: string, options: { max?: number; name?: string } = {}): Promise<{ pool: pg.Pool; target: PgTarget }> {
  const target = parsePgUrl(url);
  // As openPgPool: pg loads only where a PostgreSQL URL is set.
  const { Pool } = (await import("pg")).default;
  const pool = new Pool({
    connectionString: target.connectionString,
    max: options.max ?? 4,
    options: `-c search_path=${quoteIdent(target.schema)}`,
    application_name: options.name ?? "conveyor",
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
  });
  // A dropped idle connection must not crash the daemon; the next query reconnects.
  pool.on("error", () => undefined);
  const client = await pool.connect().catch(async (err: unknown) => {
    await pool.end().catch(() => undefined);
    throw new ConveyorError("state", `cannot connect to PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
      retryable: true,
      cause: err,
      hint: "check CONVEYOR_DATABASE_URL (host, port, database, user, password) and that the server accepts connections",
    });
  });
  try {
    // Several daemons starting at once would race on CREATE SCHEMA IF NOT EXISTS; the lock makes them take turns.
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext('conveyor.schema'))");
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(target.schema)}`);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    client.release();
    await pool.end().catch(() => undefined);
    throw new ConveyorError("state", `cannot create schema "${target.schema}" in PostgreSQL at ${target.where}: ${maskSecrets((err as Error).message)}`, {
      cause: err,
      hint: "the user needs CREATE on the database, or create the schema beforehand",
    });
  }
  client.release();
  return { pool, target };
}
