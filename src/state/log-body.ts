/**
 * The stored body of a SQLite log record, without what the row already
 * holds: the columns (id, identifier, job_id, request_id, timestamp, the
 * account as `sd_user_id`) and the fields at their usual value. An export
 * of a million rows writes a million log records, and the full body (about
 * 430 bytes, three quarters of it repeated from the columns or the same on
 * every record) made the state database write more than the export itself.
 * Reading puts the record back together; a body stored whole by an older
 * version reads as before, its own fields winning.
 *
 * @module
 */

import type { LogRecord } from "./types.js";

/** The columns a log row has beside its body. */
export interface LogColumns {
  account: string;
  id: string;
  identifier: string;
  job_id: string;
  request_id: string;
  timestamp: string;
}

/** The level a result usually has (logs.ts): stored only when a record differs. */
function levelOf(result: unknown): number {
  return result === "error" ? 3 : result === "warning" ? 2 : 1;
}

/** The record as the columns and the usual values give it, in the order LogWriter builds it. */
function base(columns: LogColumns, result: unknown): LogRecord {
  return {
    id: columns.id,
    action: "",
    channel_id: "",
    context: "",
    field_data: "",
    identifier: columns.identifier,
    job_id: columns.job_id,
    integration: "",
    message: "",
    method: "auto",
    operation: "",
    request_id: columns.request_id,
    result: typeof result === "string" ? result : "",
    sd_user_id: columns.account,
    timestamp: columns.timestamp,
    type: "",
    instance: 0,
    log_level: levelOf(result),
    sd_acct_id: 0,
  };
}

/** Fields always in the body: their usual values are only placeholders. */
const KEPT = ["action", "integration", "message", "operation", "result", "type"] as const;

/** Fields left out of the body at their usual value. */
const USUAL: ReadonlyArray<[keyof LogRecord, string | number]> = [
  ["channel_id", ""],
  ["context", ""],
  ["field_data", ""],
  ["method", "auto"],
  ["instance", 0],
  ["sd_acct_id", 0],
];

/** The fields a row holds in columns, and the others a LogRecord has. */
const KNOWN = new Set<string>(["id", "identifier", "job_id", "request_id", "timestamp", "sd_user_id", "log_level", ...KEPT, ...USUAL.map(([k]) => k)]);

/**
 * The JSON text of the fields `expandLogBody` would not give back by itself.
 * Written field by field, not through an object per record: the commit of a
 * million-row export builds a million of them.
 */
export function compactLogBody(record: LogRecord, account: string): string {
  let text = "{";
  const put = (key: string, value: unknown): void => {
    // A field left undefined is no field, as JSON.stringify of the record had it.
    if (value === undefined) return;
    text += `${text.length > 1 ? "," : ""}"${key}":${JSON.stringify(value)}`;
  };
  for (const key of KEPT) put(key, record[key]);
  for (const [key, usual] of USUAL) if (record[key] !== usual) put(key, record[key]);
  if (record.sd_user_id !== account) put("sd_user_id", record.sd_user_id);
  if (record.log_level !== levelOf(record.result)) put("log_level", record.log_level);
  for (const key of Object.keys(record)) if (!KNOWN.has(key)) put(key, (record as unknown as Record<string, unknown>)[key]);
  return `${text}}`;
}

/** The whole record from its row: the columns and usual values, then the body's own fields over them. */
export function expandLogBody(columns: LogColumns, body: string): LogRecord {
  const own = JSON.parse(body) as Record<string, unknown>;
  return Object.assign(base(columns, own.result), own);
}
