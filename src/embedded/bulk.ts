import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { Transform } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { isPrototypeKey, PROTOTYPE_KEYS_RULE } from "../json-limits.js";
import { apiSource, type ServiceContext } from "./context.js";
import { sqlTime } from "./db.js";
import { HttpError, text, truthy, unixTime } from "../http/envelopes.js";
import { csvRows, detectEncoding, openCsv, type UploadEncoding } from "./csv.js";
import { isIdentifierField } from "./item-ops.js";
import type { BulkJob } from "./bulk-worker.js";

interface Upload {
  path: string;
  sha256: string;
  bytes: number;
  fields: Record<string, string>;
}

/** Streams the multipart body: the file to disk (hashing it on the way), the other parts as fields. */
async function receive(ctx: ServiceContext, request: FastifyRequest, bulkFile: string): Promise<Upload | undefined> {
  if (!request.isMultipart()) throw new HttpError(400, "POST /v1/bulk takes multipart/form-data with a bulk_file part");
  const fields: Record<string, string> = {};
  let upload: Upload | undefined;
  for await (const part of request.parts()) {
    if (part.type === "field") {
      fields[part.fieldname] = text(part.value) ?? "";
      continue;
    }
    if (part.fieldname !== "bulk_file" || upload) {
      part.file.resume();
      continue;
    }
    const hash = createHash("sha256");
    let bytes = 0;
    const target = ctx.presign.path(`${bulkFile}.upload`);
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        bytes += chunk.length;
        done(null, chunk);
      },
    });
    await pipeline(part.file, tap, createWriteStream(target));
    if (part.file.truncated) throw new HttpError(413, "bulk_file is larger than the 1 GB the embedded service accepts: split it");
    upload = { path: target, sha256: hash.digest("hex"), bytes, fields };
  }
  return upload && { ...upload, fields };
}

/** Reads the whole upload once to check the header and count the data rows, so `rows` can be answered at once. */
async function inspect(file: string, encoding: UploadEncoding): Promise<number> {
  let header: string[] | undefined;
  let rows = 0;
  for await (const row of csvRows(await openCsv(file, encoding))) {
    if (header) {
      rows += 1;
      continue;
    }
    header = row.map((cell) => cell.trim());
    if (header[0]?.toLowerCase() !== "action") throw new HttpError(400, `the first column of bulk_file must be action, not ${JSON.stringify(header[0] ?? "")}`);
    const named = header.findIndex(isPrototypeKey);
    if (named >= 0) throw new HttpError(400, `column ${named + 1} of bulk_file is named ${JSON.stringify(header[named])}; ${PROTOTYPE_KEYS_RULE}`);
    if (!isIdentifierField(header[1] ?? "")) throw new HttpError(400, `the second column of bulk_file must be the identifier (guid, sku or id), not ${JSON.stringify(header[1] ?? "")}`);
  }
  if (!header) throw new HttpError(400, "bulk_file is empty: it needs a header line (action,guid,…) and rows");
  return rows;
}

function publicJob(job: BulkJob): Record<string, unknown> {
  const { upload: _upload, result: _result, encoding: _encoding, error, ...rest } = job;
  return { ...rest, skip_all: String(job.skip_all), ...(error ? { message: error } : {}) };
}

export function registerBulk(app: FastifyInstance, ctx: ServiceContext): void {
  app.post("/v1/bulk", async (request) => {
    const bulkFile = `${sqlTime(new Date(ctx.now())).replace(/\D/g, "")}-${randomBytes(6).toString("hex")}.csv`;
    const upload = await receive(ctx, request, bulkFile);
    if (!upload) throw new HttpError(400, "the bulk_file part is missing: send the CSV (or gzipped or zipped CSV) as bulk_file");
    let rows: number;
    let encoding: UploadEncoding;
    try {
      encoding = await detectEncoding(upload.path);
      rows = await inspect(upload.path, encoding);
    } catch (err) {
      await rm(upload.path, { force: true });
      if (err instanceof HttpError) throw err;
      throw new HttpError(400, `bulk_file cannot be read: ${(err as Error).message}`);
    }
    const info = ctx.db
      .prepare(
        `INSERT INTO bulk_jobs (bulk_file, bulk_name, bulk_email, skip_all, sha256, created, status, rows, upload, encoding, integration)
         VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
      )
      .run(bulkFile, upload.fields.bulk_name ?? "", upload.fields.bulk_email ?? "", truthy(upload.fields.skip_all) ? 1 : 0, upload.sha256, sqlTime(new Date(ctx.now())), rows, upload.path, encoding, apiSource(request).integration);
    const jobId = Number(info.lastInsertRowid);
    ctx.bulk.enqueue(jobId);
    return { result: "success", bulk_file: bulkFile, job_id: jobId, rows, sha256: upload.sha256, time: unixTime(ctx.now()) };
  });

  app.get<{ Params: { jobId: string } }>("/v1/bulk/results/cancel/:jobId", async (request) => {
    const id = /^\d+$/.test(request.params.jobId) ? Number(request.params.jobId) : -1;
    const job = ctx.bulk.job(id);
    if (!job) throw new HttpError(404, `no bulk job ${JSON.stringify(request.params.jobId)}: give the job_id of POST /v1/bulk`);
    if (!ctx.bulk.cancel(id)) throw new HttpError(409, `bulk job ${id} is already ${job.status}; only a queued or running job can be canceled`);
    return { result: "success", message: `bulk job ${id} canceled`, job_id: id, time: unixTime(ctx.now()) };
  });

  app.get<{ Params: { bulkFile: string } }>("/v1/bulk/results/:bulkFile", async (request) => {
    const { bulkFile } = request.params;
    const job = await ctx.waits.latest(bulkFile, () => ctx.db.prepare("SELECT * FROM bulk_jobs WHERE bulk_file = ?").get(bulkFile) as BulkJob | undefined);
    if (!job) throw new HttpError(404, `no bulk file ${JSON.stringify(request.params.bulkFile)}: give the bulk_file of POST /v1/bulk`);
    const done = job.status === "complete" || job.status === "canceled";
    return {
      result: "success",
      ...publicJob(job),
      url: done && job.result ? ctx.presign.url(job.result) : null,
      time: unixTime(ctx.now()),
    };
  });

  app.get<{ Params: { date: string } }>("/v1/bulk/jobs/:date", async (request) => {
    const date = request.params.date;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
      throw new HttpError(400, `the date must be YYYY-MM-DD (UTC), not ${JSON.stringify(date)}`);
    }
    const jobs = ctx.db.prepare("SELECT * FROM bulk_jobs WHERE created >= ? AND created < ? ORDER BY job_id").all(`${date} 00:00:00`, `${date} 99`) as BulkJob[];
    return { result: "success", date, jobs: jobs.map(publicJob), time: unixTime(ctx.now()) };
  });
}
