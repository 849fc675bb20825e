import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpConnector } from "../../connectors/http.js";
import type { HttpConnection } from "../../connectors/http-connection.js";
import { startPartnerApi, type PartnerApi, type PartnerApiOptions } from "../../samples/partner-api.js";
import { caught } from "../helpers/caught.js";
import { memoryContext, type TestContext } from "../helpers/memory-context.js";
import { downloadText } from "./http-download.js";

/**
 * Request sequences against the partner API stand-in: a report job asked for,
 * polled until done and downloaded; a poll that runs out of time; a canceled
 * run; an OAuth token that expired between runs.
 */
const fast = { retry: { baseDelayMs: 5, maxDelayMs: 10 }, timeoutMs: 5_000 };
let dir: string;
let api: PartnerApi | undefined;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-triggers-"));
});
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function partner(options: PartnerApiOptions = {}): Promise<PartnerApi> {
  api = await startPartnerApi({ port: 0, ...options });
  return api;
}

/** The report job of samples/report-job-http.json: request, poll until done, download `{{trigger_value}}`. */
function reportJob(p: PartnerApi, poll: Record<string, unknown> = {}): HttpConnection {
  return {
    type: "http",
    address: "{{trigger_value}}",
    method: "GET",
    payload: {},
    oauth: { address: `${p.url}/oauth/token`, client_id: p.clientId, client_secret: p.clientSecret },
    triggers: [
      { method: "POST", address: `${p.url}/v1/reports`, payload: { type: "products" }, jsonpath: "$.id" },
      { address: `${p.url}/v1/reports/{{trigger_value1}}`, jsonpath: "$.download_url", poll: { until: "$.status", equals: "done", interval: 0.02, backoff: 1.5, deadline: 5, ...poll } },
    ],
  };
}

const download = (c: HttpConnector): Promise<string> => downloadText(c, dir);

describe("http triggers: a report job", () => {
  it("requests the report, polls it to done and downloads the CSV its answer links to", async () => {
    const p = await partner({ reportPolls: 3 });
    const ctx = memoryContext();
    const c = new HttpConnector(reportJob(p), ctx, fast);
    const [file] = await c.list();
    expect(file?.name).toBe("response");
    const csv = await download(c);
    expect(csv.split("\n")[0]).toBe("sku,title,price,stock");
    expect(csv).toContain('PA-1003,"Label printer ""Z4"", thermal",615.00,0');
    expect(p.state.reports.get("rep-1")).toBe(4); // three pending answers, then done
    expect(p.state.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "POST /v1/reports",
      ...Array.from({ length: 4 }, () => "GET /v1/reports/rep-1"),
      "GET /v1/reports/rep-1/download",
    ]);
    expect(p.state.tokenRequests).toBe(1);
    expect(ctx.logText()).toContain("http trigger 2 of 2 answered");
    await c.close();
  });

  it("the connection test probes the first trigger's address without starting a job", async () => {
    const p = await partner();
    // A header for the final request that needs a trigger value must not stop the test.
    const c = new HttpConnector({ ...reportJob(p), headers: { "X-Report": "{{trigger_value1}}" } }, memoryContext(), fast);
    const result = await c.test();
    expect(result.facts).toMatchObject({ address: `${p.url}/v1/reports`, auth: "oauth", triggers: "2" });
    expect(p.state.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["HEAD /v1/reports"]);
    expect(p.state.reports.size).toBe(0);
    await c.close();
  });

  it("a poll past its deadline fails with timeout, quoting the last answer", async () => {
    const p = await partner({ reportPolls: 1_000 });
    const c = new HttpConnector(reportJob(p, { deadline: 0.2, interval: 0.03 }), memoryContext(), fast);
    const started = Date.now();
    const err = await caught(download(c));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(err.code).toBe("timeout");
    expect(err.message).toContain("connection.triggers[1].poll: $.status was not \"done\" after 0.2 s");
    expect(err.message).toContain('the last answer (HTTP 200): {"id":"rep-1","status":"pending"}');
    expect(p.state.requests.some((r) => r.url.endsWith("/download"))).toBe(false);
    await c.close();
  });

  it("a fail_on value ends the polling at once", async () => {
    const p = await partner({ reportPolls: 1_000 });
    const c = new HttpConnector(reportJob(p, { fail_on: ["pending"] }), memoryContext(), fast);
    const err = await caught(download(c));
    expect(err.code).toBe("protocol");
    expect(err.message).toMatch(/\$\.status is "pending", which ends the polling/);
    expect(p.state.reports.get("rep-1")).toBe(1);
    await c.close();
  });

  it("a canceled run stops polling at once", async () => {
    const p = await partner({ reportPolls: 1_000 });
    const abort = new AbortController();
    const c = new HttpConnector(reportJob(p, { interval: 30, deadline: 600 }), memoryContext({}, { signal: abort.signal }), fast);
    const pending = caught(download(c));
    while ((p.state.reports.get("rep-1") ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
    // The next poll is 30 s away, past the test's time limit: only a cancel that ends the wait lets this test pass.
    abort.abort();
    const err = await pending;
    expect(err.code).toBe("canceled");
    expect(err.message).toContain("connection.triggers[1]");
    await c.close();
  });

  it("retries a trigger that answers 500 through the connection's retry", async () => {
    const p = await partner({ reportPolls: 1, flakyEvery: 2 });
    const c = new HttpConnector(reportJob(p), memoryContext(), fast);
    expect(await download(c)).toContain("PA-1001");
    expect(p.state.requests.length).toBeGreaterThan(4);
    await c.close();
  });
});

describe("the stand-in's shipments", () => {
  it("are read by page token from the pointer's position, and a run with a later pointer reads only what is newer", async () => {
    const p = await partner({ shipmentOrderIds: ["5001", "5002", "5003"], pageSize: 2 });
    const ctx = memoryContext();
    const conn: HttpConnection = {
      type: "http",
      address: `${p.url}/v1/shipments?updated_since={{pointer.since}}`,
      method: "GET",
      payload: {},
      oauth: { address: `${p.url}/oauth/token`, client_id: p.clientId, client_secret: p.clientSecret },
      paginate: true,
      pagination: { next: "$.next_page_token", param: "page_token", records: "$.shipments" },
      pointers: { since: { from: "$.updated_at", keep: "max", initial: "1970-01-01T00:00:00Z" } },
    };
    const first = new HttpConnector(conn, ctx, fast);
    const all = JSON.parse(await download(first)) as Array<{ order_id: string; updated_at: string }>;
    expect(all.map((s) => s.order_id)).toEqual(["5001", "5002", "5003"]);
    expect(p.state.requests.map((r) => r.url.replace(/page_token=[^&]+/, "page_token=…"))).toEqual([
      "/v1/shipments?updated_since=1970-01-01T00%3A00%3A00Z",
      "/v1/shipments?updated_since=1970-01-01T00%3A00%3A00Z&page_token=…",
    ]);
    await ctx.metadata.set("pointers", { since: all[0]?.updated_at });
    const second = new HttpConnector(conn, ctx, fast);
    const newer = JSON.parse(await download(second)) as Array<{ order_id: string }>;
    expect(newer.map((s) => s.order_id)).toEqual(["5002", "5003"]);
    await Promise.all([first.close(), second.close()]);
  });

  it("a trigger address a parameter made wrong fails before anything is sent, naming the trigger", async () => {
    const p = await partner();
    const c = new HttpConnector({ ...reportJob(p), triggers: [{ address: "partner.example/v1/reports", jsonpath: "$.id" }] }, memoryContext(), fast);
    const err = await caught(download(c));
    expect(err.code).toBe("definition_invalid");
    expect(err.message).toContain("connection.triggers[0].address partner.example/v1/reports is not an http(s) URL");
    expect(p.state.requests).toEqual([]);
    await c.close();
  });
});

describe("http triggers: OAuth", () => {
  it("an expired token is refreshed once, stored in metadata, and the sequence goes on", async () => {
    const p = await partner({ reportPolls: 0 });
    const ctx: TestContext = memoryContext();
    const first = new HttpConnector(reportJob(p), ctx, fast);
    await download(first);
    await first.close();
    const before = (ctx.metadata.values.get("oauth") as { access_token: string }).access_token;
    expect(p.state.tokenRequests).toBe(1);

    p.expireTokens(); // the next run's cached token has run out on the server's side
    const second = new HttpConnector(reportJob(p), ctx, fast);
    expect(await download(second)).toContain("PA-1004");
    expect(p.state.tokenRequests).toBe(2);
    const after = (ctx.metadata.values.get("oauth") as { access_token: string }).access_token;
    expect(after).not.toBe(before);
    // The refused request was the first trigger, sent again with the fresh token.
    const posts = p.state.requests.filter((r) => r.method === "POST");
    expect(posts.map((r) => r.authorized)).toEqual([true, false, true]);
    await second.close();
  });
});
