import type { ServiceCaller } from "./http.js";
import { asRecord, isRecord, v1Failure } from "./response.js";
import type { LogQuery, LogRecord } from "../state/types.js";

/**
 * Search parameters of seed v3 part 4.4 (also accepted by v1 `POST /logs`) as
 * they travel: the store's query, with the multi-value fields comma-delimited.
 */
export type LogSearch = Omit<LogQuery, "identifier" | "context" | "integration" | "account" | "run"> & {
  identifier?: string;
  context?: string;
  integration?: string;
};

/** Seed v3 part 2.4: one shape for the worker, the client and the embedded service. */
export type { LogRecord };

export interface LogPage {
  found: number;
  found_more_logs?: boolean;
  logs: LogRecord[];
  records: string;
  sort: string;
  start: number;
}

function pageOf(body: unknown): LogPage {
  const results = asRecord(asRecord(body).results);
  const logs = Array.isArray(results.logs) ? results.logs.filter(isRecord) : [];
  return {
    found: Number(results.found ?? logs.length) || 0,
    ...(results.found_more_logs !== undefined ? { found_more_logs: Boolean(results.found_more_logs) } : {}),
    logs: logs as unknown as LogRecord[],
    records: String(results.records ?? ""),
    sort: String(results.sort ?? ""),
    start: Number(results.start ?? 0) || 0,
  };
}

function clean(search: LogSearch): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(search)) if (value !== undefined && value !== "") out[key] = value as string | number;
  return out;
}

/** `POST /v3/logs`. A search changes nothing, so it is retried like a read (it still spends write budget). */
export async function searchLogs(caller: ServiceCaller, search: LogSearch, signal?: AbortSignal): Promise<LogPage> {
  const res = await caller.send({ method: "POST", path: "/v3/logs", json: clean(search), idempotent: true, signal });
  return pageOf(res.body);
}

/** `POST /v1/logs`, form encoded; same search fields, same page shape. */
export async function searchLogsV1(caller: ServiceCaller, search: LogSearch, signal?: AbortSignal): Promise<LogPage> {
  const res = await caller.send({ method: "POST", path: "/v1/logs", form: clean(search), idempotent: true, signal });
  const failure = v1Failure({ method: "POST", path: "/v1/logs" }, res.body);
  if (failure) throw failure;
  const body = asRecord(res.body);
  // v1 may answer the logs at the top level rather than under `results`.
  return pageOf(isRecord(body.results) ? body : { results: body });
}
