import type { Db } from "./db.js";
import { sqlTimeAt } from "./db.js";
import type { LogRecord } from "../state/types.js";

export type { LogRecord };

/** Who caused a change: a single API call or a bulk row (job_id and request_id tie the rows to the job). */
export interface ChangeSource {
  method: "api" | "bulk";
  requestId: string;
  jobId: string;
  integration: string;
}

export interface LogInput {
  source: ChangeSource;
  type: "item" | "order";
  action: string;
  identifier: string;
  result: "success" | "error";
  message: string;
  fieldData?: Record<string, unknown>;
  details?: Record<string, unknown>;
}

/** The context of changes made in the account itself rather than through a channel. */
export const SERVICE_CONTEXT = "service";

export const LOG_FILTER_COLUMNS = ["identifier", "context", "integration", "instance", "request_id", "id"] as const;
export const LOG_REFINE_COLUMNS = ["channel_id", "action", "operation", "method", "type", "result", "job_id"] as const;

export class LogStore {
  private readonly insert;

  constructor(
    private readonly db: Db,
    private readonly now: () => number,
  ) {
    // Positional parameters, without an object made per record: a bulk job writes a log record for every row it applies.
    this.insert = db.prepare(
      `INSERT INTO logs (identifier, context, integration, instance, request_id, timestamp, channel_id, action, operation, method, type, result, job_id, record)
       VALUES (?, ?, ?, 0, ?, ?, '0', ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  write(input: LogInput): void {
    const { source } = input;
    const record = {
      field_data: JSON.stringify(input.fieldData ?? {}),
      message: JSON.stringify({ message: input.message, ...(input.details ?? {}) }),
      log_level: input.result === "success" ? 6 : 3,
    };
    this.insert.run(
      input.identifier,
      SERVICE_CONTEXT,
      source.integration,
      source.requestId,
      sqlTimeAt(this.now()),
      input.action,
      `${input.type}.${input.action}`,
      source.method,
      input.type,
      input.result,
      source.jobId,
      JSON.stringify(record),
    );
  }

  static toRecord(row: Record<string, unknown>): LogRecord {
    const extra = JSON.parse(String(row.record)) as { field_data: string; message: string; log_level: number };
    return {
      action: String(row.action),
      channel_id: String(row.channel_id),
      context: String(row.context),
      field_data: extra.field_data,
      id: String(row.id),
      identifier: String(row.identifier),
      job_id: String(row.job_id),
      integration: String(row.integration),
      message: extra.message,
      method: String(row.method),
      operation: String(row.operation),
      request_id: String(row.request_id),
      result: String(row.result),
      sd_user_id: "1",
      timestamp: String(row.timestamp),
      type: String(row.type),
      instance: Number(row.instance),
      log_level: extra.log_level,
      sd_acct_id: 1,
    };
  }
}
