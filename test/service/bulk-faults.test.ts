import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { fileSha256, utcDate } from "../../src/service/bulk.js";
import { ServiceClient } from "../../src/service/client.js";
import { TokenBucketLimiter } from "../../src/service/limiter.js";
import { json, multipartFields, sha256, startFaultServer, type FaultServer, type Received } from "./fault-server.js";
import type { ServerResponse } from "node:http";

let dir = "";
let file = "";
let server: FaultServer | undefined;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-bulk-"));
  file = path.join(dir, "bulk-1.csv");
  writeFileSync(file, "action,guid,title,price\nadd,0700,Lamp,9.50\nadd,B-2,\"Desk, oak\",120\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Job {
  bulk_file: string;
  bulk_name: string;
  sha256: string;
  created: string;
  rows: number;
  status: string;
}

/**
 * A bulk endpoint whose upload answers go wrong as `fault` says for the n-th
 * upload: `process-then-drop` keeps the job and destroys the socket before
 * answering, `drop` destroys it without keeping anything, `503` refuses.
 */
async function bulkServer(fault: (n: number) => "ok" | "process-then-drop" | "drop" | "503", listing: "ok" | "failure" = "ok"): Promise<{ jobs: Job[]; client: ServiceClient }> {
  const jobs: Job[] = [];
  let uploads = 0;
  server = await startFaultServer((req: Received, res: ServerResponse) => {
    if (req.method === "POST" && req.path === "/v1/bulk") {
      uploads += 1;
      const mode = fault(uploads);
      if (mode === "drop") return void res.socket?.destroy();
      if (mode === "503") return json(res, 503, { result: "error", message: "bulk queue unavailable" });
      const { fields, file: content } = multipartFields(req);
      const data = content ?? Buffer.alloc(0);
      const job: Job = {
        bulk_file: `bf-${jobs.length + 1}.csv`,
        bulk_name: fields.bulk_name ?? "",
        sha256: sha256(data),
        created: new Date().toISOString().slice(0, 19).replace("T", " "),
        rows: data.toString().trim().split("\n").length - 1,
        status: "queued",
      };
      jobs.push(job);
      if (mode === "process-then-drop") return void res.socket?.destroy();
      return json(res, 200, { result: "success", bulk_file: job.bulk_file, rows: job.rows });
    }
    if (req.method === "GET" && req.path.startsWith("/v1/bulk/jobs/")) {
      const date = req.path.slice("/v1/bulk/jobs/".length);
      if (listing === "failure") return json(res, 200, { result: "failure", message: "job list unavailable", time: new Date().toISOString() });
      return json(res, 200, { result: "success", date, jobs: jobs.filter((j) => j.created.startsWith(date)) });
    }
    json(res, 404, { result: "failure", message: `no route ${req.path}` });
  });
  const client = new ServiceClient({
    baseUrl: server.url,
    apiUser: "demo",
    apiToken: "bulk-t0ken-xyz",
    limiter: new TokenBucketLimiter(),
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  });
  return { jobs, client };
}

function uploads(): Received[] {
  return (server?.received ?? []).filter((r) => r.method === "POST");
}

describe("bulk upload whose answer is lost", () => {
  it("is found in the job list and not sent again when the service kept it", async () => {
    const { jobs, client } = await bulkServer((n) => (n === 1 ? "process-then-drop" : "ok"));
    const submitted = await client.submitBulk(file, { name: "run-7-1", skipAll: true, baseDelayMs: 10 });
    expect(submitted).toEqual({ bulk_file: "bf-1.csv", rows: 2 });
    expect(jobs).toHaveLength(1);
    expect(uploads()).toHaveLength(1);
    expect(jobs[0]?.sha256).toBe(await fileSha256(file));
    const { fields } = multipartFields(uploads()[0] as Received);
    expect(fields).toMatchObject({ bulk_name: "run-7-1", skip_all: "1" });
    expect(server?.received.some((r) => r.path === `/v1/bulk/jobs/${utcDate(Date.now())}`)).toBe(true);
  });

  it("is not sent again when the job list is refused: the upload may have landed", async () => {
    const { jobs, client } = await bulkServer((n) => (n === 1 ? "process-then-drop" : "ok"), "failure");
    const err = await client.submitBulk(file, { name: "run-7-9", baseDelayMs: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).message).toContain("may have reached the service");
    expect((err as ConveyorError).hint).toContain("not sent again");
    expect(uploads()).toHaveLength(1);
    expect(jobs).toHaveLength(1);
  });

  it("is sent again when the job list shows the service never kept it", async () => {
    const { jobs, client } = await bulkServer((n) => (n === 1 ? "drop" : "ok"));
    const submitted = await client.submitBulk(file, { name: "run-7-2", baseDelayMs: 10 });
    expect(submitted.bulk_file).toBe("bf-1.csv");
    expect(jobs.map((j) => j.bulk_name)).toEqual(["run-7-2"]);
    expect(uploads()).toHaveLength(2);
  });

  it("is sent again after a 503, once the job list confirms nothing was kept", async () => {
    const { jobs, client } = await bulkServer((n) => (n === 1 ? "503" : "ok"));
    await client.submitBulk(file, { name: "run-7-3", baseDelayMs: 10 });
    expect(jobs).toHaveLength(1);
    expect(uploads()).toHaveLength(2);
    const kinds = (server?.received ?? []).map((r) => `${r.method} ${r.path.split("/").slice(0, 4).join("/")}`);
    expect(kinds).toEqual(["POST /v1/bulk", "GET /v1/bulk/jobs", "POST /v1/bulk"]);
  });

  it("does not take another submission's job of the same name but other bytes for its own", async () => {
    const { jobs, client } = await bulkServer((n) => (n === 2 ? "drop" : "ok"));
    const other = path.join(dir, "other.csv");
    writeFileSync(other, "action,guid\nend,Z-1\n");
    await client.submitBulk(other, { name: "same-name", baseDelayMs: 10 });
    const mine = await client.submitBulk(file, { name: "same-name", baseDelayMs: 10 });
    expect(mine.bulk_file).toBe("bf-2.csv");
    expect(jobs).toHaveLength(2);
  });

  it("gives up with a clear error when the service keeps failing, having applied nothing", async () => {
    const { jobs, client } = await bulkServer(() => "drop");
    const err = await client.submitBulk(file, { name: "run-7-4", attempts: 2, baseDelayMs: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).message).toContain('bulk upload "run-7-4" failed 2 times');
    expect((err as ConveyorError).hint).toContain("nothing was applied");
    expect(jobs).toHaveLength(0);
  });
});

describe("bulk results", () => {
  it("polls through a 503 and streams the result rows, identifiers as text", async () => {
    let polls = 0;
    server = await startFaultServer((req, res) => {
      if (req.path === "/v1/bulk/results/bf-9.csv") {
        polls += 1;
        if (polls === 2) return json(res, 503, { message: "busy" });
        const done = polls >= 4;
        return json(res, 200, {
          result: "success",
          status: done ? "complete" : "running",
          rows: 3,
          processed: done ? 3 : 1,
          succeeded: done ? 2 : 1,
          failed: done ? 1 : 0,
          url: done ? `${server?.url ?? ""}/files/bf-9-result.csv?expires=1&sig=abc` : null,
        });
      }
      if (req.path.startsWith("/files/bf-9-result.csv")) {
        res.writeHead(200, { "content-type": "text/csv" });
        res.write("\uFEFFrow,action,guid,result,message\n1,add,0700,success,\n");
        setTimeout(() => res.end('2,add,B-2,error,"exists, ""B-2"" is taken\nsince 2024"\n3,edit,C-3,success,\n'), 20);
        return;
      }
      json(res, 404, {});
    });
    const client = new ServiceClient({ baseUrl: server.url, apiUser: "demo", apiToken: "bulk-t0ken-xyz", limiter: new TokenBucketLimiter(), retry: { baseDelayMs: 5 } });
    const status = await client.waitBulk("bf-9.csv", { pollMs: 5 });
    expect(status).toMatchObject({ status: "complete", rows: 3, succeeded: 2, failed: 1 });
    const rows = [];
    for await (const row of client.bulkResultRows(status.url ?? "")) rows.push(row);
    expect(rows).toEqual([
      { row: 1, action: "add", guid: "0700", result: "success", message: "" },
      { row: 2, action: "add", guid: "B-2", result: "error", message: 'exists, "B-2" is taken\nsince 2024' },
      { row: 3, action: "edit", guid: "C-3", result: "success", message: "" },
    ]);
    expect(client.counter.read).toBe(polls + 1);
  });

  it("a result file cut off mid-body is a retryable error naming what was read", async () => {
    server = await startFaultServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/csv", "content-length": "400" });
      res.write("row,action,guid,result,message\n1,add,A,success,\n");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const client = new ServiceClient({ baseUrl: server.url, apiUser: "demo", apiToken: "bulk-t0ken-xyz", limiter: new TokenBucketLimiter() });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const row of client.bulkResultRows(`${server?.url ?? ""}/files/r.csv`)) seen.push(row.guid);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["A"]);
    expect(err).toMatchObject({ code: "service_unavailable", retryable: true });
    expect((err as Error).message).toContain("reading the result file of a bulk job failed");
  });

  it("a job that failed without a result file is a bulk_failed error", async () => {
    server = await startFaultServer((_req, res) => json(res, 200, { status: "failed", rows: 0, message: "file is not CSV" }));
    const client = new ServiceClient({ baseUrl: server.url, apiUser: "demo", apiToken: "bulk-t0ken-xyz", limiter: new TokenBucketLimiter() });
    const err = await client.waitBulk("bf-1.csv", { pollMs: 5 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "bulk_failed", message: "bulk job bf-1.csv ended failed: file is not CSV" });
  });
});
