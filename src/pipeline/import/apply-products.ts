/**
 * Step 8 of a product import: send each bulk file, wait for the job, and read
 * its per-row result file back. A row's failure is that record's failure;
 * the other rows stand. When the service cannot take a file at all, that
 * file and the ones after it are failed and the run stops writing.
 *
 * @module
 */

import { createReadStream } from "node:fs";
import { toConveyorError, type ConveyorError } from "../../errors.js";
import { csvRowPages, mayHaveReached, type ServiceClient } from "../../service/index.js";
import { NO_JOURNAL, productKind, type ApplyJournal, type FailedRecords } from "../apply-journal.js";
import type { BulkFile } from "../output/bulk-batcher.js";
import type { LogWriter } from "../logs.js";

export interface ApplyResult {
  succeeded: number;
  failed: FailedRecords;
  /** The error that stopped the apply stage early, if any. */
  error: ConveyorError | null;
  writes: number;
}

export interface ApplyInput {
  client: ServiceClient;
  files: readonly BulkFile[];
  runId: string;
  skipAll: boolean;
  logs: LogWriter;
  signal?: AbortSignal;
  /** Where failures go (default: a Map). */
  failed?: FailedRecords;
  onFile?: (done: number, total: number) => void;
  /** Told as each file goes and its result is read (the run record). */
  journal?: ApplyJournal;
}

/**
 * The identifier of each data row of a bulk file, in order (result rows are
 * matched back by position), read back from the file itself: keeping them
 * from plan to commit would hold a big feed's identifiers in memory for the
 * whole apply. One file at a time, `bulk_rows` at most.
 */
export async function bulkIdentifiers(file: BulkFile): Promise<string[]> {
  const identifiers: string[] = [];
  let header = true;
  for await (const rows of csvRowPages(createReadStream(file.path), `bulk file ${file.name}`)) {
    for (const cells of rows) {
      if (header) header = false;
      else identifiers.push(cells[1] ?? "");
    }
  }
  return identifiers;
}

export async function applyProductFiles(input: ApplyInput): Promise<ApplyResult> {
  const result: ApplyResult = { succeeded: 0, failed: input.failed ?? new Map<string, string>(), error: null, writes: 0 };
  const journal = input.journal ?? NO_JOURNAL;
  await journal.planned(input.files.length);
  for (const [index, file] of input.files.entries()) {
    if (result.error) {
      for (const id of await bulkIdentifiers(file)) result.failed.set(id, `not sent: ${result.error.message}`);
      continue;
    }
    // One file's identifiers as an array while its results are matched, then dropped.
    const identifiers = await bulkIdentifiers(file);
    let job: string | null = null;
    await journal.sending(file.name, identifiers.length);
    try {
      const submitted = await input.client.submitBulk(file.path, { name: `${input.runId}-${index + 1}`, skipAll: input.skipAll, signal: input.signal });
      job = submitted.bulk_file;
      await journal.accepted(file.name, job);
      const status = await input.client.waitBulk(submitted.bulk_file, { signal: input.signal });
      const seen = new Set<number>();
      let succeeded = 0;
      if (status.url) {
        for await (const row of input.client.bulkResultRows(status.url, input.signal)) {
          const identifier = identifiers[row.row - 1];
          if (identifier === undefined) continue;
          seen.add(row.row);
          const ok = row.result === "success";
          if (ok) succeeded++;
          else result.failed.set(identifier, row.message || row.result);
          const logged = input.logs.add({
            action: file.action,
            identifier,
            result: ok ? "success" : "error",
            message: ok ? { fields: file.columns } : { error: row.message || row.result },
            requestId: submitted.bulk_file,
          });
          if (logged) await logged;
        }
      }
      // A row the result file does not mention was not confirmed: treat it as failed so the next run sends it again.
      identifiers.forEach((identifier, i) => {
        if (!seen.has(i + 1)) result.failed.set(identifier, `the service's result for ${file.name} does not mention row ${i + 1} (job ${status.status})`);
      });
      result.succeeded += succeeded;
      await journal.confirmed(file.name, productKind(file.action), succeeded, identifiers.length - succeeded);
    } catch (raw) {
      const err = toConveyorError(raw);
      // Until a job is known, only an upload that may have landed stays unconfirmed in the record.
      if (job === null && !mayHaveReached(err) && err.code !== "canceled") await journal.notSent(file.name);
      if (err.code === "canceled") throw err;
      result.error = err;
      for (const id of identifiers) result.failed.set(id, err.message);
    }
    input.onFile?.(index + 1, input.files.length);
  }
  return result;
}
