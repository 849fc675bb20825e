import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpConnector } from "../../connectors/http.js";
import { registerSecret } from "../../src/secrets.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { caught } from "../helpers/caught.js";
import { FeedServer } from "../helpers/http-feed-server.js";
import { memoryContext } from "../helpers/memory-context.js";

/** Triggers before an export's requests: an upload to the link a trigger got, per-record sends after one session request, a deadline's quote masked. */
const fast = { retry: { baseDelayMs: 5, maxDelayMs: 10 }, timeoutMs: 5_000 };
const server = new FeedServer();
let dir: string;
let api: PartnerApi | undefined;

beforeAll(async () => {
  await server.start();
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-trigger-export-"));
});
afterAll(() => server.stop());
afterEach(async () => {
  server.routes.clear();
  server.seen.length = 0;
  await api?.close();
  api = undefined;
});

describe("triggers before an export", () => {
  it("uploads the file to the address a trigger's answer gave, once", async () => {
    server.json("/uploads", () => ({ status: 201, body: { upload: { url: `${server.base}/put/f-77` } } }));
    server.json("/put/f-77", (req) => ({ body: { got: req.body.length } }));
    const file = path.join(dir, "feed.csv");
    writeFileSync(file, "sku,price\nA,1\n");
    const c = new HttpConnector({ type: "http", address: "{{trigger_value}}", method: "PUT", triggers: [{ method: "POST", address: `${server.base}/uploads`, payload: { name: "feed.csv" }, jsonpath: "$.upload.url" }] }, memoryContext(), fast);
    expect(await c.upload(file, "feed.csv")).toEqual({ size: 14 });
    expect(server.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /uploads", "PUT /put/f-77"]);
    expect(JSON.parse(server.seen[0]?.body.toString() ?? "")).toEqual({ name: "feed.csv" });
    await c.close();
  });

  it("sends each record after the triggers ran once, a failing record alone marked failed", async () => {
    api = await startPartnerApi({ port: 0, reportPolls: 0, failOrders: ["1002"] });
    const c = new HttpConnector(
      {
        type: "http",
        address: `${api.url}/v1/orders`,
        method: "POST",
        headers: { "X-Batch": "{{trigger_value}}" },
        oauth: { address: `${api.url}/oauth/token`, client_id: api.clientId, client_secret: api.clientSecret },
        triggers: [{ method: "POST", address: `${api.url}/v1/reports`, payload: {}, jsonpath: "$.id" }],
      },
      memoryContext(),
      { ...fast, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const results = await c.sendRecords([{ order_id: "1001" }, { order_id: "1002" }, { order_id: "1003" }]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(results[1]).toMatchObject({ status: 500 });
    expect(api.state.orders).toEqual([{ order_id: "1001" }, { order_id: "1003" }]);
    expect(api.state.requests.filter((r) => r.url === "/v1/reports")).toHaveLength(1);
    await c.close();
  });
});

describe("a poll's deadline", () => {
  it("quotes the last answer cut to length, with secrets masked", async () => {
    registerSecret("poll-secret-3141");
    server.json("/job", () => ({ body: { status: "pending", note: `key poll-secret-3141 ${"x".repeat(2_000)}` } }));
    const c = new HttpConnector({ type: "http", address: "{{trigger_value}}", method: "GET", payload: {}, triggers: [{ address: `${server.base}/job`, jsonpath: "$.url", poll: { until: "$.status", equals: "done", interval: 0.02, deadline: 0.1 } }] }, memoryContext(), fast);
    const [file] = await c.list();
    const err = await caught(c.download(file ?? { name: "x", path: "x", size: 0, modified: null }, path.join(dir, "never")));
    expect(err.code).toBe("timeout");
    expect(err.message).toContain('{"status":"pending","note":"key ******** xxx');
    expect(err.message).not.toContain("poll-secret-3141");
    expect(err.message.length).toBeLessThan(800);
    expect(err.message).toMatch(/x…$/);
    await c.close();
  });
});
