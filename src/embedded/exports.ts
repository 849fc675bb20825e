import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { ServiceContext } from "./context.js";
import { sqlTime } from "./db.js";
import { HttpError, text, unixTime } from "../http/envelopes.js";
import { readFields } from "./form.js";
import type { ExportJob } from "./export-writer.js";
import { compileQuery } from "./query.js";

export function registerExports(app: FastifyInstance, ctx: ServiceContext): void {
  app.post("/v1/bulk/exports", async (request) => {
    const body = await readFields(request);
    const type = text(body.type) ?? "";
    if (type !== "items" && type !== "orders") {
      throw new HttpError(400, `type must be items or orders, not ${JSON.stringify(type)} (pages and categories are not kept by the embedded service)`);
    }
    const search = text(body.search) ?? "";
    // Parse now so a bad search is a 400 here, not a failed export later.
    const matcher = compileQuery(search);
    const bulkFile = `export-${sqlTime(new Date(ctx.now())).replace(/\D/g, "")}-${randomBytes(6).toString("hex")}.csv`;
    const job: ExportJob = { bulk_file: bulkFile, type, search, fields: text(body.fields) ?? "", status: "queued", rows: 0, created: sqlTime(new Date(ctx.now())), error: null };
    ctx.db.prepare("INSERT INTO exports (bulk_file, type, search, fields, status, rows, created) VALUES (?, ?, ?, ?, ?, 0, ?)").run(job.bulk_file, job.type, job.search, job.fields, job.status, job.created);
    ctx.exports.start(job, matcher);
    return { result: "success", bulk_file: bulkFile, time: unixTime(ctx.now()) };
  });

  app.get<{ Params: { bulkFile: string } }>("/v1/bulk/exports/:bulkFile", async (request) => {
    const job = await ctx.waits.latest(request.params.bulkFile, () => ctx.exports.job(request.params.bulkFile));
    if (!job) throw new HttpError(404, `no export ${JSON.stringify(request.params.bulkFile)}: give the bulk_file of POST /v1/bulk/exports`);
    return {
      result: "success",
      bulk_file: job.bulk_file,
      type: job.type,
      status: job.status,
      rows: job.rows,
      created: job.created,
      ...(job.error ? { message: job.error } : {}),
      url: job.status === "complete" ? ctx.presign.url(job.bulk_file) : null,
      time: unixTime(ctx.now()),
    };
  });
}
