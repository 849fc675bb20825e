import { gzipSync } from "node:zlib";
import yazl from "yazl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, waitFor, type Harness } from "./helpers.js";

function upload(csv: string | Buffer, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append("bulk_file", new Blob([typeof csv === "string" ? csv : new Uint8Array(csv)]), "bulk.csv");
  return form;
}

function zipped(name: string, text: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(text), name);
    zip.end();
    const chunks: Buffer[] = [];
    zip.outputStream.on("data", (c: Buffer) => chunks.push(c));
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on("error", reject);
  });
}

type Status = Record<string, unknown> & { status: string; url: string | null };

async function post(h: Harness, csv: string | Buffer, fields?: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await h.call("POST", "/v1/bulk", upload(csv, fields));
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function finished(h: Harness, bulkFile: string): Promise<Status> {
  return waitFor(async () => {
    const { body } = await h.json("GET", `/v1/bulk/results/${bulkFile}`);
    const s = body as Status;
    return s.status === "queued" || s.status === "running" ? undefined : s;
  }, `bulk ${bulkFile}`);
}

async function resultRows(url: string): Promise<string[][]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.text()).trim().split("\r\n").map((line) => line.split(","));
}

describe("embedded service: v1 bulk (v1 part 4.5, service.md)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "EXIST", title: "Existing", price: "5", color: "blue" });
  });
  afterAll(() => h.close());

  it("answers success, bulk_file and rows at once, then processes with the row rules", async () => {
    const csv = [
      "action,guid,title,price,color",
      "add,NEW1,New one,10,red",
      "add,EXIST,Dup,1,x",
      "edit,EXIST,,7,",
      "edit,GHOST,Ghost,1,x",
      "start,NEW2,Second,3,green",
      "delete,NEW2,,,",
      "fly,NEW3,t,1,x",
    ].join("\n");
    const answer = await post(h, csv, { bulk_name: "rules", bulk_email: "ops@example.com", skip_all: "1" });
    expect(answer).toMatchObject({ result: "success", rows: 7 });
    expect(typeof answer.bulk_file).toBe("string");
    const status = await finished(h, String(answer.bulk_file));
    expect(status).toMatchObject({ status: "complete", rows: 7, processed: 7, succeeded: 4, failed: 3 });
    const rows = await resultRows(String(status.url));
    expect(rows[0]).toEqual(["row", "action", "guid", "result", "message"]);
    expect(rows.slice(1).map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
      ["1", "add", "NEW1", "success"],
      ["2", "add", "EXIST", "error"],
      ["3", "edit", "EXIST", "success"],
      ["4", "edit", "GHOST", "error"],
      ["5", "start", "NEW2", "success"],
      ["6", "delete", "NEW2", "success"],
      ["7", "fly", "NEW3", "error"],
    ]);
    // A blank cell resets the field: title and color of EXIST are gone, price changed.
    const item = (await h.json("GET", "/v1/editor/items/edit?guid=EXIST")).body as Record<string, string>;
    expect(item.price).toBe("7");
    expect(item.title).toBeUndefined();
    expect(item.color).toBeUndefined();
  });

  it("accepts a gzipped CSV (detected by its first bytes)", async () => {
    const answer = await post(h, gzipSync("action,guid,title\nadd,GZ1,Gzipped\n"));
    expect(answer.rows).toBe(1);
    expect(await finished(h, String(answer.bulk_file))).toMatchObject({ status: "complete", succeeded: 1 });
    expect((await h.json("GET", "/v1/editor/items/edit?guid=GZ1")).body).toMatchObject({ title: "Gzipped" });
  });

  it("accepts a zipped CSV", async () => {
    const answer = await post(h, await zipped("items.csv", "action,guid,title\nadd,ZP1,Zipped\nadd,ZP2,Zipped too\n"));
    expect(answer.rows).toBe(2);
    expect(await finished(h, String(answer.bulk_file))).toMatchObject({ status: "complete", succeeded: 2 });
  });

  it("refuses a file whose first column is not action, or a request without bulk_file", async () => {
    const res = await h.call("POST", "/v1/bulk", upload("guid,title\nX,Y\n"));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ result: "failure" });
    const form = new FormData();
    form.append("bulk_name", "nothing");
    const none = await h.call("POST", "/v1/bulk", form);
    expect(none.status).toBe(400);
  });

  it("lists the jobs of a date with bulk_name, sha256 and status", async () => {
    const csv = "action,guid,title\nadd,DATE1,Dated\n";
    const answer = await post(h, csv, { bulk_name: "dated-job" });
    await finished(h, String(answer.bulk_file));
    const today = new Date().toISOString().slice(0, 10);
    const { body } = await h.json("GET", `/v1/bulk/jobs/${today}`);
    const jobs = body.jobs as Record<string, unknown>[];
    const job = jobs.find((j) => j.bulk_name === "dated-job");
    const { createHash } = await import("node:crypto");
    expect(job).toMatchObject({ bulk_file: answer.bulk_file, status: "complete", sha256: createHash("sha256").update(csv).digest("hex") });
    expect(String(job?.created)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect((await h.json("GET", "/v1/bulk/jobs/2001-01-01")).body.jobs).toEqual([]);
    expect((await h.json("GET", "/v1/bulk/jobs/yesterday")).status).toBe(400);
  });

  it("the result link works without auth headers; a tampered link is 403", async () => {
    const answer = await post(h, "action,guid,title\nadd,LINK1,Linked\n");
    const status = await finished(h, String(answer.bulk_file));
    const url = new URL(String(status.url));
    expect((await fetch(url)).status).toBe(200);
    const tampered = new URL(url);
    tampered.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600));
    const res = await fetch(tampered);
    expect(res.status).toBe(403);
    const other = new URL(url);
    other.pathname = other.pathname.replace("-result", "");
    expect((await fetch(other)).status).toBe(403);
  });
});

describe("embedded service: bulk progress, cancel and link expiry", () => {
  let h: Harness;
  let clock = Date.now();
  beforeAll(async () => {
    h = await startHarness({ bulkBatchRows: 10, bulkBatchDelayMs: 100, now: () => clock });
  });
  afterAll(() => h.close());

  const big = ["action,guid,title", ...Array.from({ length: 300 }, (_, i) => `add,B${i},Bulk ${i}`)].join("\n");

  it("progress: processed grows while the job runs", async () => {
    const answer = await post(h, big);
    const running = await waitFor(async () => {
      const s = (await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body;
      return s.status === "running" && Number(s.processed) > 0 ? s : undefined;
    }, "a running job with progress");
    expect(Number(running.processed)).toBeLessThan(300);
    expect(running.url).toBeNull();
    await h.json("GET", `/v1/bulk/results/cancel/${String(answer.job_id)}`);
  });

  it("cancel stops a running job; a finished one cannot be canceled", async () => {
    const answer = await post(h, big.replaceAll(",B", ",C"));
    await waitFor(async () => ((await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body.status === "running" ? true : undefined), "running");
    const cancel = await h.json("GET", `/v1/bulk/results/cancel/${String(answer.job_id)}`);
    expect(cancel.body).toMatchObject({ result: "success" });
    const status = await finished(h, String(answer.bulk_file));
    expect(status.status).toBe("canceled");
    expect(Number(status.processed)).toBeLessThan(300);
    const again = await h.json("GET", `/v1/bulk/results/cancel/${String(answer.job_id)}`);
    expect(again.body).toMatchObject({ result: "failure" });
    expect((await h.json("GET", "/v1/bulk/results/cancel/99999")).body).toMatchObject({ result: "failure" });
  });

  it("a result link expires after 30 minutes: 403", async () => {
    const answer = await post(h, "action,guid,title\nadd,EXP1,Expiring\n");
    const status = await finished(h, String(answer.bulk_file));
    const url = String(status.url);
    expect(Number(new URL(url).searchParams.get("expires"))).toBe(Math.floor(clock / 1000) + 1800);
    expect((await fetch(url)).status).toBe(200);
    clock += 31 * 60_000;
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(String(((await res.json()) as Record<string, unknown>).message)).toContain("expired");
  });
});

describe("embedded service: a status request waits a moment for its job to end", () => {
  const rows = (prefix: string, n: number): string => ["action,guid,title", ...Array.from({ length: n }, (_, i) => `add,${prefix}${i},Item ${i}`)].join("\n");

  it("answers once the job ends, not at the client's next poll", async () => {
    // A hold far past the job's length: the first status request can only answer "complete" by waiting for the end.
    const h = await startHarness({ bulkBatchRows: 10, bulkBatchDelayMs: 50, statusHoldMs: 60_000 });
    try {
      const answer = await post(h, rows("W", 30));
      const first = (await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body;
      expect(first).toMatchObject({ status: "complete", processed: 3 * 10, succeeded: 30 });
      expect(first.url).toEqual(expect.any(String));
      const exported = await h.form("/v1/bulk/exports", { type: "items", fields: "guid,title" });
      const ready = (await h.json("GET", `/v1/bulk/exports/${String(exported.body.bulk_file)}`)).body;
      expect(ready).toMatchObject({ status: "complete", rows: 30 });
    } finally {
      await h.close();
    }
  });

  it("answers with the job under way once the hold is over, and at once when the job is canceled", async () => {
    const h = await startHarness({ bulkBatchRows: 10, bulkBatchDelayMs: 200, statusHoldMs: 50 });
    try {
      const answer = await post(h, rows("U", 300));
      const first = (await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body;
      expect(["queued", "running"]).toContain(first.status);
      expect(first.url).toBeNull();
      await h.json("GET", `/v1/bulk/results/cancel/${String(answer.job_id)}`);
      expect((await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body.status).toBe("canceled");
    } finally {
      await h.close();
    }
  });

  it("lets a request waiting for a job that will not run answer when the service stops", async () => {
    const h = await startHarness({ bulkBatchRows: 10, bulkBatchDelayMs: 200, statusHoldMs: 60_000 });
    await post(h, rows("S", 300));
    const queued = await post(h, rows("Q", 10));
    const waiting = h.json("GET", `/v1/bulk/results/${String(queued.bulk_file)}`);
    await waitFor(async () => (h.svc.context.waits.pending > 0 ? true : undefined), "the status request to wait");
    await h.close();
    // The first job stopped at a batch, the second never ran: the request answers instead of holding the stop for a minute.
    expect((await waiting).body.status).toBe("queued");
  });
});
