/**
 * Carries a cluster's waiting runs over from a queue schema made by pg-boss
 * 10. pg-boss 11 rewrote its tables and, unlike earlier majors, cannot migrate
 * a version 10 schema in start(); its release notes leave moving the jobs to
 * the application. So the old schema is renamed before pg-boss starts (it then
 * installs a fresh one under the usual name), and its waiting runs are sent to
 * the new queue, in one transaction with dropping the old schema.
 *
 * @module
 */

import type pg from "pg";
import type { PgBoss, SendOptions } from "pg-boss";
import type { Logger } from "../../log.js";
import { quoteIdent } from "../../state/pg-migrations.js";
import { adapter, RUN_QUEUE, type RunJob } from "./intake.js";

/** The first schema version of pg-boss 11; every pg-boss 10 release wrote a lower one. */
const FIRST_REWRITTEN_VERSION = 25;

/** Where an old queue schema waits while its runs are moved. */
export function setAsideName(bossSchema: string): string {
  return `${bossSchema}_v10`;
}

async function schemaExists(client: pg.PoolClient, schema: string): Promise<boolean> {
  const found = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  return found.rowCount === 1;
}

/**
 * Renames a pg-boss 10 queue schema out of pg-boss 12's way; a schema already
 * at 11 or later is left for pg-boss's own migrations. Call it holding the
 * queue lock, before pg-boss starts.
 */
export async function setAsideOldQueue(client: pg.PoolClient, bossSchema: string): Promise<boolean> {
  const table = await client.query<{ found: string | null }>("SELECT to_regclass($1)::text AS found", [`${quoteIdent(bossSchema)}.version`]);
  if (!table.rows[0]?.found) return false;
  const version = await client.query<{ version: number }>(`SELECT version FROM ${quoteIdent(bossSchema)}.version`);
  const current = version.rows[0]?.version;
  if (current === undefined || current >= FIRST_REWRITTEN_VERSION) return false;
  await client.query(`ALTER SCHEMA ${quoteIdent(bossSchema)} RENAME TO ${quoteIdent(setAsideName(bossSchema))}`);
  return true;
}

interface OldJob {
  id: string;
  data: RunJob;
  priority: number;
  start_after: Date;
}

/**
 * Sends the runs waiting in a set-aside pg-boss 10 schema to the run queue
 * under their job ids, and drops that schema, in one transaction: a start
 * that fails half-way leaves both as they were for the next one. Jobs that
 * were active belonged to daemons now stopped; their runs' leases settle them,
 * as they did under pg-boss 10, which failed such jobs when they expired.
 */
export async function moveOldRuns(client: pg.PoolClient, boss: PgBoss, bossSchema: string, jobOptions: SendOptions, logger: Logger): Promise<void> {
  const old = setAsideName(bossSchema);
  if (!(await schemaExists(client, old))) return;
  await client.query("BEGIN");
  try {
    const waiting = await client.query<OldJob>(
      `SELECT id::text AS id, data, priority, start_after FROM ${quoteIdent(old)}.job
       WHERE name = $1 AND state IN ('created', 'retry') ORDER BY created_on`,
      [RUN_QUEUE],
    );
    for (const job of waiting.rows) {
      await boss.send(RUN_QUEUE, job.data, { ...jobOptions, id: job.id, priority: job.priority, startAfter: job.start_after, db: adapter(client) });
    }
    await client.query(`DROP SCHEMA ${quoteIdent(old)} CASCADE`);
    await client.query("COMMIT");
    logger.info({ event: "queue_upgraded", runs: waiting.rowCount }, "moved the runs waiting in the pg-boss 10 queue to the new one");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}
