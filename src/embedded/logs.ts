import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ServiceContext } from "./context.js";
import { badRequest as bad, wholeNumber } from "../http/envelopes.js";
import { LOG_TIMESTAMP, logInstance, logPage, logSearchParams, requireTimestampPair } from "../http/log-params.js";
import { readFields } from "./form.js";
import { LOG_FILTER_COLUMNS, LOG_REFINE_COLUMNS, LogStore } from "./log-store.js";

/** `found` never exceeds this (v3 part 4.4); `found_more_logs` says whether more exist. */
export const FOUND_CAP = 1001;

function list(value: string): string[] {
  return value.split(",").map((v) => v.trim()).filter(Boolean);
}

/**
 * Log search of part 4.4, newest first. The search fields narrow the
 * result; the refining fields (action, method, type, result, job_id…) apply
 * only together with at least one search field, as the seed states.
 */
export function searchLogs(ctx: ServiceContext, p: Record<string, string>): Record<string, unknown> {
  const { start, records } = logPage(p);
  requireTimestampPair(p);
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
      const n = column === "instance" ? logInstance(value) : wholeNumber(value, column, 0, Number.MAX_SAFE_INTEGER, 0);
      where.push(`${column} = ?`);
      args.push(n);
    } else inList(column, value);
  }
  if (p.timestamp_start !== undefined && p.timestamp_end !== undefined) {
    if (!LOG_TIMESTAMP.test(p.timestamp_start) || !LOG_TIMESTAMP.test(p.timestamp_end)) throw bad("timestamp_start and timestamp_end take the format Y-m-d H:i:s, e.g. 2026-01-31 23:59:00");
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
  // A v1 form comes in every shape the other v1 forms take (multipart, json=<JSON>…): read it as they do first.
  app.post("/v1/logs", async (request) => {
    request.body = await readFields(request);
    return handler(request);
  });
  app.post("/v3/logs", handler);
}
