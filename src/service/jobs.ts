import { isRecord } from "./response.js";

/** A bulk job as `GET /v1/bulk/jobs/{date}` lists it. */
export interface BulkJob {
  job_id?: string;
  bulk_file?: string;
  bulk_name?: string;
  sha256?: string;
  status?: string;
  rows?: number;
  created?: string;
  /** `created` as epoch milliseconds, when it parses. */
  createdMs?: number;
  raw: Record<string, unknown>;
}

function text(value: unknown): string | undefined {
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

function createdMs(value: unknown): number | undefined {
  if (typeof value === "number") return value < 1e12 ? value * 1000 : value;
  if (typeof value !== "string" || value === "") return undefined;
  if (/^\d+$/.test(value)) return createdMs(Number(value));
  // "Y-m-d H:i:s" without a zone is the service's UTC.
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) ? `${value.replace(" ", "T")}Z` : value;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}

function toJob(value: unknown): BulkJob | undefined {
  if (!isRecord(value)) return undefined;
  const rows = Number(value.rows);
  const job: BulkJob = { raw: value };
  const assign = <K extends "job_id" | "bulk_file" | "bulk_name" | "sha256" | "status" | "created">(key: K, source: unknown): void => {
    const v = text(source);
    if (v !== undefined) job[key] = v;
  };
  assign("job_id", value.job_id ?? value.id);
  assign("bulk_file", value.bulk_file ?? value.file);
  assign("bulk_name", value.bulk_name ?? value.name);
  assign("sha256", value.sha256);
  assign("status", value.status);
  assign("created", value.created);
  if (Number.isFinite(rows)) job.rows = rows;
  const ms = createdMs(value.created);
  if (ms !== undefined) job.createdMs = ms;
  return job;
}

/**
 * The seed does not fix the listing's envelope, so accept the shapes a v1
 * listing takes: an array, `{jobs: [...]}` (or `results`/`data`), or records
 * keyed by ordinal like the item pages.
 */
export function bulkJobsOf(body: unknown): BulkJob[] {
  let list: unknown[] = [];
  if (Array.isArray(body)) list = body;
  else if (isRecord(body)) {
    const nested = body.jobs ?? body.results ?? body.data;
    if (Array.isArray(nested)) list = nested;
    else if (isRecord(nested)) list = Object.values(nested);
    else list = Object.entries(body).filter(([key]) => /^\d+$/.test(key)).map(([, v]) => v);
  }
  return list.map(toJob).filter((job): job is BulkJob => job !== undefined);
}
