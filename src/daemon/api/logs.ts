import type { FastifyInstance } from "fastify";
import { logSearchParams } from "../../embedded/logs.js";
import type { LogQuery } from "../../state/index.js";
import { accountOf, type ApiContext } from "./context.js";
import { badRequest } from "./query.js";

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const KNOWN = [
  "start", "records", "identifier", "context", "integration", "instance", "request_id", "timestamp_start", "timestamp_end", "id",
  "channel_id", "action", "operation", "method", "type", "result", "job_id",
];

function whole(value: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw badRequest(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return Number(value);
}

const list = (v: string | undefined): string[] | undefined => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : undefined);

export function logQuery(p: Record<string, string>, account: string): LogQuery {
  const unknown = Object.keys(p).filter((k) => !KNOWN.includes(k));
  if (unknown.length > 0) throw badRequest(`unknown log search parameter${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}; valid parameters: ${KNOWN.join(", ")}`);
  if ((p.timestamp_start === undefined) !== (p.timestamp_end === undefined)) throw badRequest("timestamp_start and timestamp_end are sent as a pair: give both");
  for (const k of ["timestamp_start", "timestamp_end"]) {
    const v = p[k];
    if (v !== undefined && !TIMESTAMP.test(v)) throw badRequest(`${k} takes the format Y-m-d H:i:s, e.g. 2026-01-31 23:59:00, not ${JSON.stringify(v)}`);
  }
  const instance = p.instance === undefined ? undefined : whole(p.instance, "instance", 0, Number.MAX_SAFE_INTEGER, 0);
  if (instance === 1) throw badRequest("instance is 0 or a number 2 or greater");
  return {
    account,
    start: whole(p.start, "start", 0, Number.MAX_SAFE_INTEGER, 0),
    records: whole(p.records, "records", 1, 50, 20),
    identifier: list(p.identifier),
    context: list(p.context),
    integration: list(p.integration),
    instance,
    request_id: p.request_id,
    timestamp_start: p.timestamp_start,
    timestamp_end: p.timestamp_end,
    id: p.id,
    channel_id: p.channel_id,
    action: p.action,
    operation: p.operation,
    method: p.method,
    type: p.type,
    result: p.result,
    job_id: p.job_id,
  };
}

/** `POST /v3/logs` (part 4.4) over the log records the account's runs wrote, newest first. */
export function registerLogs(app: FastifyInstance, ctx: ApiContext): void {
  app.post("/v3/logs", async (request) => {
    const query = logQuery(logSearchParams(request), accountOf(request));
    const page = await ctx.store.searchLogs(query);
    return {
      results: {
        found: page.found,
        ...(page.found >= 1001 ? { found_more_logs: page.found_more_logs } : {}),
        logs: page.logs,
        records: String(query.records),
        sort: "id desc",
        start: query.start,
      },
      timestamp: ctx.now().toISOString(),
    };
  });
}
