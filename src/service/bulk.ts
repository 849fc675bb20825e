import { openAsBlob } from "node:fs";
import path from "node:path";
import { ConveyorError, toConveyorError } from "../errors.js";
import { fileSha256 } from "../file-sha256.js";
import { backoffDelay, sleep } from "../retry.js";
import { csvRows } from "./csv.js";
import type { ServiceCaller } from "./http.js";
import { bulkJobsOf, type BulkJob } from "./jobs.js";
import { newFormData } from "./undici-lean.js";
import { asRecord, v1Failure } from "./response.js";

export type { BulkJob };

export interface BulkSubmitted {
  bulk_file: string;
  rows: number;
}

export type BulkState = "queued" | "running" | "complete" | "failed" | "canceled";

export interface BulkStatus {
  status: BulkState;
  rows: number;
  processed: number;
  succeeded: number;
  failed: number;
  /** Presigned link to the result CSV, once complete (valid 30 minutes). */
  url?: string;
  message?: string;
}

export interface BulkResultRow {
  /** Data row of the bulk file, 1 = the first row after the header. */
  row: number;
  action: string;
  guid: string;
  result: string;
  message: string;
}

export interface SubmitOptions {
  /** Unique per submission (`<run-id>-<n>`): it is how a lost answer is found in the job list. */
  name: string;
  email?: string;
  /** `skip_all=1`: do not send the changes to channels. */
  skipAll?: boolean;
  signal?: AbortSignal;
  /** Sends at most this many times, each after the job list showed the last one missing. */
  attempts?: number;
  baseDelayMs?: number;
}

export { fileSha256 };

export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * An error of `submitBulk` after which the upload may be on the service (the
 * job list could not tell): the run record keeps such a file as sent with
 * its result unknown, not as never sent.
 */
export function mayHaveReached(err: ConveyorError): boolean {
  return err.details.maybe_sent === true;
}

/** A failure after which the service may or may not hold the upload. */
function ambiguous(err: ConveyorError): boolean {
  return err.code === "service_unavailable" && err.details.sent !== false;
}

export async function bulkJobs(caller: ServiceCaller, date: string, signal?: AbortSignal): Promise<BulkJob[]> {
  const path = `/v1/bulk/jobs/${encodeURIComponent(date)}`;
  const res = await caller.send({ method: "GET", path, signal });
  // A refused listing is not an empty one: read as "no job", it would have an upload that did land sent twice.
  const failure = v1Failure({ method: "GET", path }, res.body);
  if (failure) throw failure;
  return bulkJobsOf(res.body);
}

/** The job an earlier send of this submission created, if the service has it. */
async function findSubmitted(caller: ServiceCaller, name: string, sha256: string, since: number, signal?: AbortSignal): Promise<BulkJob | undefined> {
  const dates = [...new Set([utcDate(since), utcDate(Date.now())])];
  for (const date of dates) {
    const jobs = await bulkJobs(caller, date, signal);
    const byName = jobs.find((job) => job.bulk_name === name && (job.sha256 === undefined || job.sha256 === sha256));
    if (byName) return byName;
    // Without names, the same bytes sent after we started can only be ours.
    const byHash = jobs.find((job) => job.bulk_name === undefined && job.sha256 === sha256 && (job.createdMs ?? 0) >= since - 5_000);
    if (byHash) return byHash;
  }
  return undefined;
}

function submittedOf(body: unknown, label: { method: string; path: string }): BulkSubmitted {
  const failure = v1Failure(label, body);
  if (failure) throw failure;
  const record = asRecord(body);
  if (typeof record.bulk_file !== "string" || !record.bulk_file) {
    throw new ConveyorError("service_http", `POST /v1/bulk answered without a bulk_file: ${JSON.stringify(body).slice(0, 200)}`, {
      details: label,
    });
  }
  return { bulk_file: record.bulk_file, rows: Number(record.rows ?? 0) || 0 };
}

/**
 * Uploads a bulk file, streamed from disk. When the answer is lost after the
 * file may have reached the service, the job list decides: the upload is sent
 * again only if no job of that name (and hash) exists, so rows are never
 * applied twice.
 */
export async function submitBulk(caller: ServiceCaller, filePath: string, options: SubmitOptions): Promise<BulkSubmitted> {
  const sha256 = await fileSha256(filePath);
  const blob = await openAsBlob(filePath, { type: "text/csv" });
  const fileName = path.basename(filePath);
  const since = Date.now();
  const attempts = options.attempts ?? 3;
  const label = { method: "POST", path: "/v1/bulk" };
  let last: ConveyorError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const res = await caller.send({
        method: "POST",
        path: "/v1/bulk",
        multipart: () => {
          const form = newFormData();
          form.append("bulk_name", options.name);
          if (options.email) form.append("bulk_email", options.email);
          form.append("skip_all", options.skipAll ? "1" : "0");
          form.append("bulk_file", blob, fileName);
          return form;
        },
        idempotent: false,
        signal: options.signal,
      });
      return submittedOf(res.body, label);
    } catch (raw) {
      const err = toConveyorError(raw);
      if (!ambiguous(err)) throw err;
      last = err;
    }
    await sleep(backoffDelay(attempt, options.baseDelayMs ?? 1_000, 15_000), options.signal);
    const job = await findSubmitted(caller, options.name, sha256, since, options.signal).catch((err: unknown) => {
      throw new ConveyorError("service_unavailable", `bulk upload "${options.name}" may have reached the service, and its job list cannot be read to tell: ${toConveyorError(err).message}`, {
        cause: err,
        details: { ...label, maybe_sent: true },
        hint: "It is not sent again, so no row is applied twice; check the service's bulk jobs of today, then run the automation again.",
      });
    });
    if (job) {
      if (!job.bulk_file) throw new ConveyorError("service_http", `bulk job "${options.name}" is listed without a bulk_file`, { details: { ...label, maybe_sent: true } });
      return { bulk_file: job.bulk_file, rows: job.rows ?? 0 };
    }
  }
  throw new ConveyorError("service_unavailable", `bulk upload "${options.name}" failed ${attempts} times: ${last?.message ?? "unknown"}`, {
    retryable: true,
    cause: last,
    details: label,
    hint: "The job list shows the file was not accepted, so nothing was applied; run the automation again later.",
  });
}

const STATES: ReadonlySet<string> = new Set(["queued", "running", "complete", "failed", "canceled"]);

export function bulkStatusOf(body: unknown, label: { method: string; path: string }): BulkStatus {
  const failure = v1Failure(label, body);
  if (failure) throw failure;
  const record = asRecord(body);
  const status = String(record.status ?? "");
  if (!STATES.has(status)) {
    throw new ConveyorError("service_http", `${label.method} ${label.path} answered an unknown status "${status}"`, { details: label });
  }
  const count = (key: string): number => Number(record[key] ?? 0) || 0;
  return {
    status: status as BulkState,
    rows: count("rows"),
    processed: count("processed"),
    succeeded: count("succeeded"),
    failed: count("failed"),
    ...(typeof record.url === "string" && record.url ? { url: record.url } : {}),
    ...(typeof record.message === "string" ? { message: record.message } : {}),
  };
}

export interface WaitOptions {
  signal?: AbortSignal;
  /** First pause between polls (default 250 ms); grows by half each poll up to `maxPollMs` (default 5 s). */
  pollMs?: number;
  maxPollMs?: number;
}

/**
 * Calls `check` until it gives an answer, pausing between calls: the one
 * polling loop of bulk jobs and exports. The pauses start short, because most
 * jobs end in seconds and a pause past the end is time the run sits idle (a
 * 1 s start growing to 15 s left a million-row scope read waiting three
 * seconds after its export was ready), and are capped at 5 s, which costs a
 * ten-minute job 120 of the 3,000 reads the seed's 300 a minute allow.
 */
export async function pollUntil<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  let delay = options.pollMs ?? 250;
  const max = options.maxPollMs ?? 5_000;
  for (;;) {
    const done = await check();
    if (done !== undefined) return done;
    await sleep(delay, options.signal);
    delay = Math.min(max, Math.round(delay * 1.5));
  }
}

/** Polls a bulk job until it ends. A failed or canceled job without a result file is a `bulk_failed` error. */
export async function waitBulk(caller: ServiceCaller, bulkFile: string, options: WaitOptions = {}): Promise<BulkStatus> {
  const path = `/v1/bulk/results/${encodeURIComponent(bulkFile)}`;
  return pollUntil(async () => {
    const res = await caller.send({ method: "GET", path, signal: options.signal });
    const status = bulkStatusOf(res.body, { method: "GET", path });
    if (status.status === "complete") return status;
    if (status.status === "failed" || status.status === "canceled") {
      if (status.url) return status;
      throw new ConveyorError("bulk_failed", `bulk job ${bulkFile} ended ${status.status}${status.message ? `: ${status.message}` : ""}`, {
        details: { bulk_file: bulkFile, status: status.status },
        hint: "None of its rows is known to be applied; the next run sends them again.",
      });
    }
    return undefined;
  }, options);
}

/** The per-row results of a bulk job, streamed from its presigned CSV. */
export async function* bulkResultRows(caller: ServiceCaller, url: string, signal?: AbortSignal): AsyncGenerator<BulkResultRow> {
  let index: Record<"row" | "action" | "guid" | "result" | "message", number> | undefined;
  for await (const cells of csvRows(await caller.open(url, signal), "the result file of a bulk job")) {
    if (!index) {
      const names = cells.map((name) => name.trim().toLowerCase());
      const at = (name: string, fallback: number): number => (names.includes(name) ? names.indexOf(name) : fallback);
      // The identifier column is the third whatever its name (guid, sku).
      index = { row: at("row", 0), action: at("action", 1), guid: 2, result: at("result", 3), message: at("message", 4) };
      continue;
    }
    yield {
      row: Number(cells[index.row]),
      action: cells[index.action] ?? "",
      guid: cells[index.guid] ?? "",
      result: cells[index.result] ?? "",
      message: cells[index.message] ?? "",
    };
  }
}

export async function cancelBulk(caller: ServiceCaller, jobId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const path = `/v1/bulk/results/cancel/${encodeURIComponent(jobId)}`;
  const res = await caller.send({ method: "GET", path, signal });
  const failure = v1Failure({ method: "GET", path }, res.body);
  if (failure) throw failure;
  return asRecord(res.body);
}
