import { ConveyorError } from "../errors.js";
import { csvRecordPages, csvRecords } from "./csv.js";
import type { ServiceCaller } from "./http.js";
import { asRecord, v1Failure } from "./response.js";
import type { WaitOptions } from "./bulk.js";
import { sleep } from "../retry.js";

export interface ExportRequest {
  type: "items" | "orders";
  /** Search expression (search.md), passed through unchanged; empty = everything. */
  search?: string;
  /** Fields to export; the service always adds the identifier. */
  fields: string[];
  signal?: AbortSignal;
}

export interface ExportStatus {
  status: string;
  url?: string;
  rows?: number;
  message?: string;
}

const DONE = new Set(["complete", "completed", "done", "success"]);
const FAILED = new Set(["failed", "canceled", "error"]);

export async function requestExport(caller: ServiceCaller, req: ExportRequest): Promise<{ bulk_file: string }> {
  const path = "/v1/bulk/exports";
  const res = await caller.send({
    method: "POST",
    path,
    form: { type: req.type, search: req.search ?? "", fields: req.fields.join(",") },
    // A second export of the same selection changes no data.
    idempotent: true,
    signal: req.signal,
  });
  const failure = v1Failure({ method: "POST", path }, res.body);
  if (failure) throw failure;
  const body = asRecord(res.body);
  if (typeof body.bulk_file !== "string" || !body.bulk_file) {
    throw new ConveyorError("service_http", `POST ${path} answered without a bulk_file`, { details: { method: "POST", path } });
  }
  return { bulk_file: body.bulk_file };
}

export async function exportStatus(caller: ServiceCaller, bulkFile: string, signal?: AbortSignal): Promise<ExportStatus> {
  const path = `/v1/bulk/exports/${encodeURIComponent(bulkFile)}`;
  const res = await caller.send({ method: "GET", path, signal });
  const failure = v1Failure({ method: "GET", path }, res.body);
  if (failure) throw failure;
  const body = asRecord(res.body);
  return {
    status: String(body.status ?? ""),
    ...(typeof body.url === "string" && body.url ? { url: body.url } : {}),
    ...(body.rows !== undefined && Number.isFinite(Number(body.rows)) ? { rows: Number(body.rows) } : {}),
    ...(typeof body.message === "string" ? { message: body.message } : {}),
  };
}

/**
 * An export of a small scope is ready a few milliseconds after it was asked
 * for: its first poll comes after 50 ms, not after the 250 ms that suit a bulk
 * job. The pause then grows by half, but never past a tenth of the time
 * waited so far (and at least 250 ms): the bulk jobs' 5 s cap noticed a
 * four-second export up to two seconds late, half again the job's own time.
 * A run asks for one export, so the few more polls weigh nothing on the read
 * budget.
 */
const EXPORT_FIRST_POLL_MS = 50;
const EXPORT_POLL_FLOOR_MS = 250;

/** Polls an export until its CSV is ready and returns the presigned URL. */
export async function waitExport(caller: ServiceCaller, bulkFile: string, options: WaitOptions = {}): Promise<string> {
  const started = performance.now();
  let delay = options.pollMs ?? EXPORT_FIRST_POLL_MS;
  for (;;) {
    const status = await exportStatus(caller, bulkFile, options.signal);
    if (DONE.has(status.status) && status.url) return status.url;
    if (FAILED.has(status.status)) {
      throw new ConveyorError("bulk_failed", `export ${bulkFile} ended ${status.status}${status.message ? `: ${status.message}` : ""}`, {
        details: { bulk_file: bulkFile, status: status.status },
        hint: "Check the export's search expression and field names, then run again.",
      });
    }
    await sleep(delay, options.signal);
    const cap = Math.min(options.maxPollMs ?? Infinity, Math.max(EXPORT_POLL_FLOOR_MS, (performance.now() - started) / 10));
    delay = Math.min(cap, Math.round(delay * 1.5));
  }
}

/** The records of an export CSV, keyed by its header; every value stays text. */
export async function* exportRows(caller: ServiceCaller, url: string, signal?: AbortSignal): AsyncGenerator<Record<string, string>> {
  yield* csvRecords(await caller.open(url, signal), "an export file");
}

/** Request, wait and stream in one: the scope read of a run. */
export async function* exportRecords(caller: ServiceCaller, req: ExportRequest, options: WaitOptions = {}): AsyncGenerator<Record<string, string>> {
  for await (const page of exportRecordPages(caller, req, options)) yield* page;
}

/** As `exportRecords`, a parsed chunk of records at a time: what a million-record read wants. */
export async function* exportRecordPages(caller: ServiceCaller, req: ExportRequest, options: WaitOptions = {}): AsyncGenerator<Array<Record<string, string>>> {
  const { bulk_file } = await requestExport(caller, req);
  const signal = options.signal ?? req.signal;
  const url = await waitExport(caller, bulk_file, { ...options, signal });
  yield* csvRecordPages(await caller.open(url, signal), "an export file");
}
