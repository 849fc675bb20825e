import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServiceContext } from "./context.js";
import { badRequest as bad, fields, wholeNumber as integer } from "./envelopes.js";
import { LOG_FILTER_COLUMNS, LOG_REFINE_COLUMNS, LogStore } from "./log-store.js";

/** `found` never exceeds this (v3 part 4.4); `found_more_logs` says whether more exist. */
export const FOUND_CAP = 1001;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * The parameters of a log search (v3 part 4.4, and v1's), each one text. The
 * seed does not say whether they travel in the query or the body: both are
 * read, the body wins. Each value is a text, a number or a boolean; anything
 * else is refused naming the field, since dropping it would widen the search
 * (`{"identifier": {"$ne": 1}}` once returned every record).
 */
export function logSearchParams(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [where, source] of [["query", fields(request.query)], ["body", fields(request.body)]] as const) {
    for (const [k, v] of Object.entries(source)) {
      if (v === undefined || v === null) continue;
      if (typeof v === "string") out[k] = v;
      else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
      else {
        const several = Array.isArray(v) && where === "query" ? `${k} is given ${v.length} times in the query; give it once` : `${k} must be a text or a number, not ${Array.isArray(v) ? "a list" : "an object"}`;
        throw bad(`log search field ${several}; several values of a field go in one text, comma separated ("${k}": "a,b")`);
      }
    }
  }
  return out;
}

function list(value: string): string[] {
  return value.split(",").map((v) => v.trim()).filter(Boolean);
}

/**
 * Log search of part 4.4, newest first. The search fields narrow the
 * result; the refining fields (action, method, type, result, job_id…) apply
 * only together with at least one search field, as the seed states.
 */
export function searchLogs(ctx: ServiceContext, p: Record<string, string>): Record<string, unknown> {
  const start = integer(p.start, "start", 0, Number.MAX_SAFE_INTEGER, 0);
  const records = integer(p.records, "records", 1, 50, 20);
  if ((p.timestamp_start === undefined) !== (p.timestamp_end === undefined)) throw bad("timestamp_start and timestamp_end are sent as a pair: give both");
  const where: string[] = [];
  const args: (string | number)[] = [];
  const inList = (column: string, value: string): void => {
    const values = list(value);
    if (values.length === 0) return;
    where.push(`${column} IN (${values.map(() => "?").join(",")})`);
    args.push(...values);
  };
  for (const column of LOG_FILTER_COLUMNS) {
    const value = p[column];
    if (value === undefined || value === "") continue;
    if (column === "instance" || column === "id") {
      const n = integer(value, column, 0, Number.MAX_SAFE_INTEGER, 0);
      if (column === "instance" && n === 1) throw bad("instance is 0 or a number 2 or greater");
      where.push(`${column} = ?`);
      args.push(n);
    } else inList(column, value);
  }
  if (p.timestamp_start !== undefined && p.timestamp_end !== undefined) {
    if (!TIMESTAMP.test(p.timestamp_start) || !TIMESTAMP.test(p.timestamp_end)) throw bad("timestamp_start and timestamp_end take the format Y-m-d H:i:s, e.g. 2026-01-31 23:59:00");
    where.push("timestamp >= ? AND timestamp <= ?");
    args.push(p.timestamp_start, p.timestamp_end);
  }
  if (where.length > 0) for (const column of LOG_REFINE_COLUMNS) if (p[column]) inList(column, p[column]);
  const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const total = (ctx.db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM logs ${clause} LIMIT ${FOUND_CAP + 1})`).get(...args) as { n: number }).n;
  const rows = ctx.db.prepare(`SELECT * FROM logs ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`).all(...args, records, start) as Record<string, unknown>[];
  const found = Math.min(total, FOUND_CAP);
  return {
    results: {
      found,
      ...(found === FOUND_CAP ? { found_more_logs: total > FOUND_CAP } : {}),
      logs: rows.map((row) => LogStore.toRecord(row)),
      records: String(records),
      sort: "id desc",
      start,
    },
    timestamp: new Date(ctx.now()).toISOString(),
  };
}

export function registerLogs(app: FastifyInstance, ctx: ServiceContext): void {
  // v1 failures get the v1 envelope: the error handler picks it from the path.
  const handler = async (request: FastifyRequest): Promise<Record<string, unknown>> => searchLogs(ctx, logSearchParams(request));
  app.post("/v1/logs", handler);
  app.post("/v3/logs", handler);
}
