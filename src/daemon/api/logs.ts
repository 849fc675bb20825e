import type { FastifyInstance } from "fastify";
import { badRequest } from "../../http/envelopes.js";
import { LOG_TIMESTAMP, logInstance, logPage, logSearchParams, requireTimestampPair } from "../../http/log-params.js";
import type { LogQuery } from "../../state/index.js";
import { accountOf, type ApiContext } from "./context.js";

const KNOWN = [
  "start", "records", "identifier", "context", "integration", "instance", "request_id", "timestamp_start", "timestamp_end", "id",
  "channel_id", "action", "operation", "method", "type", "result", "job_id",
];

const list = (v: string | undefined): string[] | undefined => (v ? v.split(",").map((s) => s.trim()).filter(Boolean) : undefined);

export function logQuery(p: Record<string, string>, account: string): LogQuery {
  const unknown = Object.keys(p).filter((k) => !KNOWN.includes(k));
  if (unknown.length > 0) throw badRequest(`unknown log search parameter${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}; valid parameters: ${KNOWN.join(", ")}`);
  requireTimestampPair(p);
  for (const k of ["timestamp_start", "timestamp_end"]) {
    const v = p[k];
    if (v !== undefined && !LOG_TIMESTAMP.test(v)) throw badRequest(`${k} takes the format Y-m-d H:i:s, e.g. 2026-01-31 23:59:00, not ${JSON.stringify(v)}`);
  }
  const instance = p.instance === undefined ? undefined : logInstance(p.instance);
  return {
    account,
    ...logPage(p),
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
