import type pg from "pg";
import { LOG_FOUND_CAP, type LogCollector } from "./log-query.js";
import type { LogQuery, LogRecord } from "./types.js";

/**
 * The log records written before log pages (log-page.ts): one row each in
 * table `logs`. They are older than every page, so a search reads them
 * after the pages, and retention deletes them until none are left.
 */

/**
 * The seed's search rules (the same as `logFilter`) as one WHERE clause:
 * search fields narrow, and the refining fields count only when a search
 * field is used.
 */
function whereOf(query: LogQuery, args: unknown[]): string {
  const p = (value: unknown): string => {
    args.push(value);
    return `$${args.length}`;
  };
  const where: string[] = [];
  if (query.account) where.push(`account = ${p(query.account)}`);
  let searched = false;
  const search = (sql: string): void => {
    where.push(sql);
    searched = true;
  };
  if (query.run) search(`job_id = ${p(query.run)}`);
  if (query.identifier?.length) search(`identifier = ANY(${p(query.identifier)}::text[])`);
  if (query.context?.length) search(`context = ANY(${p(query.context)}::text[])`);
  if (query.integration?.length) search(`integration = ANY(${p(query.integration)}::text[])`);
  if (query.instance !== undefined) search(`instance = ${p(query.instance)}`);
  if (query.request_id) search(`request_id = ${p(query.request_id)}`);
  if (query.id) search(`id = ${p(query.id)}`);
  if (query.timestamp_start && query.timestamp_end) search(`ts >= ${p(query.timestamp_start)} AND ts <= ${p(query.timestamp_end)}`);
  if (searched) {
    const refine = { channel_id: query.channel_id, action: query.action, operation: query.operation, method: query.method, type: query.type, result: query.result, job_id: query.job_id };
    for (const [column, value] of Object.entries(refine)) if (value) where.push(`${column} = ${p(value)}`);
  }
  return where.length ? `WHERE ${where.join(" AND ")}` : "";
}

/**
 * Counts the old rows' matches into the collector after the pages' (at most
 * to one past the cap) and adds those of them that fall in the page asked for.
 */
export async function collectLegacyLogs(pool: pg.Pool, query: LogQuery, collector: LogCollector): Promise<void> {
  const before = collector.counted;
  const room = LOG_FOUND_CAP + 1 - before;
  if (room <= 0) return;
  const args: unknown[] = [];
  const where = whereOf(query, args);
  const counted = pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM (SELECT 1 FROM logs ${where} LIMIT ${room}) AS m`, args);
  const { skip, take } = collector.window();
  const size = Math.max(0, Math.min(take, room - skip));
  const page =
    size > 0
      ? pool.query<{ body: LogRecord }>(`SELECT body FROM logs ${where} ORDER BY seq DESC OFFSET $${args.length + 1} LIMIT $${args.length + 2}`, [...args, skip, size])
      : Promise.resolve({ rows: [] as { body: LogRecord }[] });
  const [count, rows] = await Promise.all([counted, page]);
  collector.addCounted(rows.rows.map((r) => r.body), count.rows[0]?.n ?? 0);
}

/** Retention: the old rows timestamped before `before` (`YYYY-MM-DD HH:MM:SS`). */
export async function pruneLegacyLogs(pool: pg.Pool, before: string): Promise<void> {
  await pool.query("DELETE FROM logs WHERE ts < $1", [before]);
}
