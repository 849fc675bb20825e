/**
 * The body of a SQLite log record of table `logs`, as versions before log
 * pages (log-page.ts) wrote it: without what the row already holds (the
 * columns id, identifier, job_id, request_id, timestamp, the account as
 * `sd_user_id`) and the fields at their usual value. Reading puts the record
 * back together; a body stored whole by a still older version reads as
 * before, its own fields winning.
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

/** The whole record from its row: the columns and usual values, then the body's own fields over them. */
export function expandLogBody(columns: LogColumns, body: string): LogRecord {
  const own = JSON.parse(body) as Record<string, unknown>;
  return Object.assign(base(columns, own.result), own);
}
