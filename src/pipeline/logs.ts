/**
 * Log records in the seed's shape (v3 part 2.4) for every record a run
 * touched: buffered and written to the state store in batches.
 *
 * @module
 */

import { ownCopy } from "../memory.js";
import { maskSecrets } from "../secrets.js";
import type { LogColumns, StateStore } from "../state/index.js";
import { LOG_PAGE_RECORDS } from "../state/log-page.js";

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

function logLevel(result: LogEntry["result"]): number {
  return result === "error" ? 3 : result === "warning" ? 2 : 1;
}

function timestamp(date: Date): string {
  return date.toISOString().replace("T", " ").slice(0, 19);
}

/** The log record of a row a live run read but did not plan: a skip (warning) or a row error. */
export function notPlannedLog(event: { kind: "skipped" | "error"; identifier: string; line: number; message: string }): LogEntry {
  return { action: "skip", identifier: event.identifier, result: event.kind === "error" ? "error" : "warning", message: { reason: event.message, line: event.line } };
}

/**
 * Rows buffered before they are written. A million-row export logs a million
 * records; they go to the store a page (LOG_PAGE_RECORDS) at a time, a
 * transaction (SQLite) or a statement (PostgreSQL) each.
 */
const LOG_BATCH = 5000;

/**
 * Records added and not yet written past which `add` hands its caller the
 * writes under way to wait for. A loop that logs faster than the store
 * writes (an export's commit, a record per row) held every record otherwise,
 * once each store write gave the event loop a turn.
 */
const LOG_BACKLOG = 4 * LOG_BATCH;

/**
 * The rows of a batch not yet written, one array per field a row has of its
 * own (the rest is the run's). A million-row export logs a record per row,
 * and a whole record object per row, kept until its batch was written,
 * outlived the young generation: most of the writer's cost was collecting
 * them. The store is handed these columns a page at a time (LogColumns),
 * and builds no record object at all.
 */
class Rows {
  readonly actions: string[] = [];
  readonly identifiers: string[] = [];
  readonly results: LogEntry["result"][] = [];
  readonly messages: string[] = [];
  readonly requestIds: string[] = [];
  readonly stamps: string[] = [];

  get length(): number {
    return this.identifiers.length;
  }
}

/** The fields a record has of its own; the rest are the run's. */
type OwnFields = Pick<LogColumns["fields"], "action" | "identifier" | "message" | "request_id" | "result" | "timestamp" | "log_level">;

export class LogWriter {
  private rows = new Rows();
  /** The number in the id of the first row of `rows`. */
  private firstCount = 1;
  private pending: Promise<void> = Promise.resolve();
  /** The timestamp of the current second: formatting a Date per record was a tenth of an export's commit. */
  private second = -1;
  private stamp = "";
  /** The last message and its masked text: an export logs one message object for every row of its file. */
  private lastMessage: Record<string, unknown> | null = null;
  private lastText = "";
  private added = 0;
  written = 0;

  constructor(
    private readonly store: StateStore,
    private readonly ctx: LogContext,
  ) {}

  /** A promise when the caller should wait before it adds more (LOG_BACKLOG); a caller that adds a few records may ignore it. */
  add(entry: LogEntry): Promise<void> | undefined {
    const rows = this.rows;
    rows.actions.push(entry.action);
    rows.identifiers.push(ownCopy(entry.identifier));
    rows.results.push(entry.result);
    rows.messages.push(this.messageText(entry.message));
    rows.requestIds.push(entry.requestId ?? "");
    rows.stamps.push(this.now());
    this.added++;
    if (rows.length >= LOG_BATCH) this.queue();
    return this.added - this.written > LOG_BACKLOG ? this.pending : undefined;
  }

  /**
   * Records that differ only by their identifier (an export's commit: one
   * for each row of its file), after those added before: written as pages
   * whose shared fields are stored once, with no value a record but its
   * identifier. The promise settles once they are written.
   */
  addShared(identifiers: readonly string[], shared: Omit<LogEntry, "identifier">): Promise<void> {
    if (identifiers.length === 0) return this.pending;
    this.queue();
    const message = this.messageText(shared.message);
    const stamp = this.now();
    this.added += identifiers.length;
    const own = { action: shared.action, message, request_id: shared.requestId ?? "", result: shared.result, timestamp: stamp, log_level: logLevel(shared.result) };
    this.pending = this.pending.then(() => this.writePages(identifiers.length, (from, to) => ({ ...own, identifier: identifiers.slice(from, to) })));
    return this.pending;
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

  /**
   * A page of `count` records given field by field, the first numbered
   * `first`: the store encodes it from the columns, without a record object
   * a row. The run's fields are the same on every record.
   */
  private page(first: number, count: number, own: OwnFields): LogColumns {
    const { runId, account, integration, operation, type } = this.ctx;
    return {
      count,
      // The run's id and a count: unique as run ids are, and a store keeps a page of them as its first id (state/log-page.ts).
      idPrefix: `${runId}-`,
      idFrom: first,
      fields: { channel_id: "", context: "", field_data: "", job_id: runId, integration, method: "auto", operation, sd_user_id: account, type, instance: 0, sd_acct_id: 0, ...own },
    };
  }

  /** Hands the rows added so far to the writes, after those already queued. */
  private queue(): void {
    const rows = this.rows;
    if (rows.length === 0) return;
    this.rows = new Rows();
    this.pending = this.pending.then(() => this.write(rows));
  }

  private write(rows: Rows): Promise<void> {
    return this.writePages(rows.length, (from, to) => {
      const results = rows.results.slice(from, to);
      return {
        action: rows.actions.slice(from, to),
        identifier: rows.identifiers.slice(from, to),
        message: rows.messages.slice(from, to),
        request_id: rows.requestIds.slice(from, to),
        result: results,
        timestamp: rows.stamps.slice(from, to),
        log_level: results.map(logLevel),
      };
    });
  }

  /** `count` records numbered next, a store page's worth at a time (fewer, and they die young), `own` giving records from..to's own fields. */
  private async writePages(count: number, own: (from: number, to: number) => OwnFields): Promise<void> {
    // Numbered as they are written, in the order they were queued.
    const first = this.firstCount;
    this.firstCount += count;
    for (let from = 0; from < count; from += LOG_PAGE_RECORDS) {
      const to = Math.min(count, from + LOG_PAGE_RECORDS);
      await this.store.addLogs(this.ctx.account, this.page(first + from, to - from, own(from, to)));
      this.written += to - from;
    }
  }

  async flush(): Promise<void> {
    this.queue();
    await this.pending;
  }
}
