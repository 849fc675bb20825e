/**
 * Log records in the seed's shape (v3 part 2.4) for every record a run
 * touched: buffered and written to the state store in batches.
 *
 * @module
 */

import { maskSecrets } from "../secrets.js";
import type { LogRecord, StateStore } from "../state/index.js";

export interface LogEntry {
  action: string;
  identifier: string;
  result: "success" | "error" | "warning";
  message: Record<string, unknown>;
  requestId?: string;
}

export interface LogContext {
  runId: string;
  account: string;
  integration: string;
  operation: "import" | "export";
  type: "item" | "order";
}

function timestamp(date: Date): string {
  return date.toISOString().replace("T", " ").slice(0, 19);
}

/** The log record of a row a live run read but did not plan: a skip (warning) or a row error. */
export function notPlannedLog(event: { kind: "skipped" | "error"; identifier: string; line: number; message: string }): LogEntry {
  return { action: "skip", identifier: event.identifier, result: event.kind === "error" ? "error" : "warning", message: { reason: event.message, line: event.line } };
}

/**
 * Records per write to the store: a transaction (SQLite) or a statement
 * (PostgreSQL) each. A million-row export logs a million records.
 */
const LOG_BATCH = 5000;

/**
 * A string of its own for one a record keeps until its batch is written. An
 * identifier cut from a feed is a slice of the decoded text, and a slice keeps
 * the whole piece it was cut from (up to 64 KB) alive: a batch of records
 * skipped here and there through a feed would hold thousands of pieces. V8
 * copies substrings shorter than 13 characters anyway.
 */
function ownCopy(text: string): string {
  // The concatenation is flattened into a new string of its own when sliced: a quarter of a JSON round trip's cost.
  return text.length < 13 ? text : ` ${text}`.slice(1);
}

export class LogWriter {
  private buffer: LogRecord[] = [];
  private pending: Promise<void> = Promise.resolve();
  /** The timestamp of the current second: formatting a Date per record was a tenth of an export's commit. */
  private second = -1;
  private stamp = "";
  /** The last message and its masked text: an export logs one message object for every row of its file. */
  private lastMessage: Record<string, unknown> | null = null;
  private lastText = "";
  /** The number of the last record's id. */
  private count = 0;
  written = 0;

  constructor(
    private readonly store: StateStore,
    private readonly ctx: LogContext,
  ) {}

  add(entry: LogEntry): void {
    this.buffer.push({
      // The run's id and a count: unique as run ids are, and a store keeps a page of them as its first id (state/log-page.ts).
      id: `${this.ctx.runId}-${++this.count}`,
      action: entry.action,
      channel_id: "",
      context: "",
      field_data: "",
      identifier: ownCopy(entry.identifier),
      job_id: this.ctx.runId,
      integration: this.ctx.integration,
      message: this.messageText(entry.message),
      method: "auto",
      operation: this.ctx.operation,
      request_id: entry.requestId ?? "",
      result: entry.result,
      sd_user_id: this.ctx.account,
      timestamp: this.now(),
      type: this.ctx.type,
      instance: 0,
      log_level: entry.result === "error" ? 3 : entry.result === "warning" ? 2 : 1,
      sd_acct_id: 0,
    });
    if (this.buffer.length >= LOG_BATCH) this.pending = this.pending.then(() => this.drain());
  }

  private now(): string {
    const ms = Date.now();
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.stamp = timestamp(new Date(ms));
    }
    return this.stamp;
  }

  private messageText(message: Record<string, unknown>): string {
    if (message !== this.lastMessage) {
      this.lastMessage = message;
      this.lastText = maskSecrets(JSON.stringify(message));
    }
    return this.lastText;
  }

  private async drain(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return;
    await this.store.addLogs(this.ctx.account, batch);
    this.written += batch.length;
  }

  async flush(): Promise<void> {
    this.pending = this.pending.then(() => this.drain());
    await this.pending;
  }
}
