import type pg from "pg";
import { LOG_FOUND_CAP } from "./log-query.js";
import type { LogPage, LogQuery, LogRecord } from "./types.js";

const CHUNK = 5000;

/** The timestamp as the seed's search compares it: `YYYY-MM-DD HH:MM:SS`. */
function searchTime(timestamp: string): string {
  return timestamp.replace("T", " ").slice(0, 19);
}

/** Log records in batches: one statement per batch, every field an array parameter. */
export async function insertLogs(pool: pg.Pool, account: string, records: readonly LogRecord[]): Promise<void> {
  for (let i = 0; i < records.length; i += CHUNK) {
    const batch = records.slice(i, i + CHUNK);
    const col = (pick: (r: LogRecord) => string): string[] => batch.map(pick);
    await pool.query(
      `INSERT INTO logs (account, id, identifier, context, integration, instance, request_id, ts, channel_id, action, operation,
         method, type, result, job_id, body)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::json[])`,
      [
        account,
        col((r) => r.id),
        col((r) => r.identifier),
        col((r) => r.context),
        col((r) => r.integration),
        batch.map((r) => r.instance),
        col((r) => r.request_id),
        col((r) => searchTime(r.timestamp)),
        col((r) => r.channel_id),
        col((r) => r.action),
        col((r) => r.operation),
        col((r) => r.method),
        col((r) => r.type),
        col((r) => r.result),
        col((r) => r.job_id),
        col((r) => JSON.stringify(r)),
      ],
    );
  }
}

/**
 * The seed's search rules (the same as `logFilter`, which the SQLite store
 * applies row by row) as one WHERE clause: search fields narrow, and the
 * refining fields count only when a search field is used.
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
 * Newest first. `found` counts at most one past the cap (so `found_more_logs`
 * needs no full count), and the page lies within those counted matches,
 * exactly as the row-by-row search of the SQLite store stops.
 */
export async function searchLogs(pool: pg.Pool, query: LogQuery): Promise<LogPage> {
  const start = query.start ?? 0;
  const limit = query.records ?? 20;
  const args: unknown[] = [];
  const where = whereOf(query, args);
  const counted = pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM (SELECT 1 FROM logs ${where} LIMIT ${LOG_FOUND_CAP + 1}) AS m`, args);
  const pageSize = Math.max(0, Math.min(limit, LOG_FOUND_CAP + 1 - start));
  const page =
    pageSize > 0
      ? pool.query<{ body: LogRecord }>(`SELECT body FROM logs ${where} ORDER BY seq DESC OFFSET $${args.length + 1} LIMIT $${args.length + 2}`, [
          ...args,
          Math.max(0, Math.floor(start)),
          Math.floor(pageSize),
        ])
      : Promise.resolve({ rows: [] as { body: LogRecord }[] });
  const [count, rows] = await Promise.all([counted, page]);
  const found = count.rows[0]?.n ?? 0;
  return { found: Math.min(found, LOG_FOUND_CAP), found_more_logs: found > LOG_FOUND_CAP, logs: rows.rows.map((r) => r.body) };
}
