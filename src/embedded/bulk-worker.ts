import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { ServiceCore } from "./service-core.js";
import { csvLine, csvRows, openCsv, type UploadEncoding } from "./csv.js";
import { applyItemChange, isIdentifierField, isItemAction, ITEM_ACTIONS } from "./item-ops.js";
import type { ChangeSource } from "./log-store.js";

export type BulkStatus = "queued" | "running" | "complete" | "failed" | "canceled";

export interface BulkJob {
  job_id: number;
  bulk_file: string;
  bulk_name: string;
  bulk_email: string;
  skip_all: number;
  sha256: string;
  created: string;
  status: BulkStatus;
  rows: number;
  processed: number;
  succeeded: number;
  failed: number;
  upload: string;
  encoding: UploadEncoding;
  result: string | null;
  error: string | null;
  /** The uploader's X-Auth-Integration: the log records of its rows name it, as those of single API calls do. */
  integration: string;
}

export const RESULT_HEADER = ["row", "action", "guid", "result", "message"] as const;

export interface BulkWorkerOptions {
  batchRows: number;
  delayMs: number;
}

/**
 * Runs bulk jobs one after another in the background. Rows go in transactions
 * of `batchRows`; after each batch the progress is saved and a cancel is
 * noticed, so `processed` moves while the job runs and a canceled job stops
 * at a batch boundary with the rows done so far in its result CSV.
 */
export class BulkQueue {
  private readonly waiting: number[] = [];
  private current: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly ctx: ServiceCore,
    private readonly options: BulkWorkerOptions,
  ) {}

  job(jobId: number): BulkJob | undefined {
    return this.ctx.db.prepare("SELECT * FROM bulk_jobs WHERE job_id = ?").get(jobId) as BulkJob | undefined;
  }

  enqueue(jobId: number): void {
    this.waiting.push(jobId);
    if (!this.current) this.current = this.drain().finally(() => (this.current = undefined));
  }

  /** Marks a queued or running job canceled; false when it already finished. */
  cancel(jobId: number): boolean {
    const info = this.ctx.db.prepare("UPDATE bulk_jobs SET status = 'canceled' WHERE job_id = ? AND status IN ('queued','running')").run(jobId);
    if (info.changes === 0) return false;
    const job = this.job(jobId);
    if (job) this.ctx.waits.ended(job.bulk_file);
    return true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current;
  }

  private async drain(): Promise<void> {
    for (let id = this.waiting.shift(); id !== undefined && !this.stopping; id = this.waiting.shift()) {
      const job = this.job(id);
      if (!job || job.status !== "queued") continue;
      try {
        await this.run(job);
      } catch (err) {
        this.ctx.logger.warn({ err, jobId: id }, "bulk job failed");
        this.ctx.db.prepare("UPDATE bulk_jobs SET status = 'failed', error = ? WHERE job_id = ? AND status = 'running'").run((err as Error).message, id);
      } finally {
        this.ctx.waits.ended(job.bulk_file);
      }
    }
  }

  private async run(job: BulkJob): Promise<void> {
    const { db } = this.ctx;
    const resultName = `${job.bulk_file}-result.csv`;
    db.prepare("UPDATE bulk_jobs SET status = 'running', result = ? WHERE job_id = ?").run(resultName, job.job_id);
    const out = createWriteStream(this.ctx.presign.path(resultName));
    const closed = once(out, "close");
    out.write(csvLine(RESULT_HEADER));
    const source: ChangeSource = { method: "bulk", requestId: job.bulk_file, jobId: String(job.job_id), integration: job.integration };
    const progress = db.prepare("UPDATE bulk_jobs SET processed = ?, succeeded = ?, failed = ? WHERE job_id = ?");
    const counts = { processed: 0, succeeded: 0, failed: 0 };
    let header: string[] | undefined;
    let batch: string[][] = [];
    let finished = false;
    try {
      const flush = async (): Promise<boolean> => {
        const lines = db.transaction(() => batch.map((row) => this.applyRow(row, header ?? [], ++counts.processed, source, counts)))();
        batch = [];
        progress.run(counts.processed, counts.succeeded, counts.failed, job.job_id);
        if (!out.write(lines.join(""))) await once(out, "drain");
        if (this.options.delayMs > 0) await new Promise((r) => setTimeout(r, this.options.delayMs));
        else await new Promise((r) => setImmediate(r));
        return this.job(job.job_id)?.status === "running" && !this.stopping;
      };
      for await (const row of csvRows(await openCsv(job.upload, job.encoding))) {
        if (!header) {
          header = row.map((cell) => cell.trim());
          continue;
        }
        batch.push(row);
        if (batch.length >= this.options.batchRows && !(await flush())) return;
      }
      if (batch.length > 0 && !(await flush())) return;
      finished = true;
    } finally {
      out.end();
      await closed;
      if (finished) db.prepare("UPDATE bulk_jobs SET status = 'complete' WHERE job_id = ? AND status = 'running'").run(job.job_id);
    }
  }

  private applyRow(row: string[], header: string[], number: number, source: ChangeSource, counts: { succeeded: number; failed: number }): string {
    const action = (row[0] ?? "").trim().toLowerCase();
    const identifier = header[1] ?? "guid";
    const value = (row[1] ?? "").trim();
    const fail = (message: string): string => {
      counts.failed += 1;
      this.ctx.logs.write({ source, type: "item", action: action || "skip", identifier: value, result: "error", message: `row ${number}: ${message}` });
      return csvLine([number, action, value, "error", message]);
    };
    if (row.length !== header.length) return fail(`the row has ${row.length} cells but the header has ${header.length}`);
    if (!isItemAction(action)) return fail(`unknown action ${JSON.stringify(row[0] ?? "")}: use one of ${ITEM_ACTIONS.join(", ")}`);
    if (!isIdentifierField(identifier)) return fail(`the identifier column ${JSON.stringify(identifier)} is not guid, sku or id`);
    const fields: Record<string, string> = {};
    // A blank cell resets the field (service.md), so every column is passed on.
    for (let i = 2; i < header.length; i += 1) {
      const name = header[i];
      if (name) fields[name] = row[i] ?? "";
    }
    const outcome = applyItemChange(this.ctx.items, this.ctx.logs, { action, identifier, value, fields }, source, this.ctx.now());
    if (!outcome.ok) {
      counts.failed += 1;
      return csvLine([number, action, outcome.guid || value, "error", outcome.message]);
    }
    counts.succeeded += 1;
    return csvLine([number, action, outcome.item.guid, "success", outcome.message]);
  }
}
