import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "../daemon/daemon-harness.js";

/**
 * What held when the daemon was probed as a hostile account would probe it,
 * kept as requests and their refusals so it goes on holding: another
 * account's automations and runs answer exactly as missing ones, a debug-file
 * name cannot leave its run's folder, a header a definition sends cannot
 * carry a line break, and a body far past the limit is refused unread.
 */
describe("a hostile tenant on a shared daemon", () => {
  let t: TestDaemon;
  let bob: Record<string, string>;
  let bobsId = "";
  let bobsRun = "";

  beforeAll(async () => {
    t = await startTestDaemon();
    const token = await t.daemon.accounts.add("bob", undefined, "test");
    bob = { "X-Auth-User": "bob", "X-Auth-Token": token };
    const created = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Bob's feed" }), bob);
    expect(created.status).toBe(200);
    bobsId = String(created.body.id);
    const run = await t.request("GET", `/v3/automations/custom/${bobsId}/run?debug=1`, undefined, bob);
    bobsRun = String(run.body.id);
    await waitForRun(t, bobsRun).catch(() => undefined);
  });
  afterAll(async () => {
    await t.close();
  });

  it("another account's automation answers as a missing one, on every route", async () => {
    const missing = await t.request("GET", "/v3/automations/custom/999999");
    for (const [method, url, body] of [
      ["GET", `/v3/automations/custom/${bobsId}`, undefined],
      ["PATCH", `/v3/automations/custom/${bobsId}`, { name: "mine now" }],
      ["DELETE", `/v3/automations/custom/${bobsId}`, undefined],
      ["GET", `/v3/automations/custom/${bobsId}/run`, undefined],
      ["GET", `/v3/automations/custom/${bobsId}/status`, undefined],
      ["PUT", `/v3/automations/custom/${bobsId}/parameters/warehouse`, { value: "x", encrypted: false }],
    ] as const) {
      const res = await t.request(method, url, body);
      expect(res.status, `${method} ${url}`).toBe(missing.status);
      expect(res.text).not.toContain("Bob's feed");
    }
    const mine = await t.request("GET", `/v3/automations/custom/${bobsId}`, undefined, bob);
    expect((mine.body.automation as { name: string }).name).toBe("Bob's feed");
  });

  it("another account's run, its debug files and its log records are not found", async () => {
    expect((await t.request("GET", `/v3/automations/runs/${bobsRun}`)).status).toBe(404);
    expect((await t.request("GET", `/v3/automations/runs/${bobsRun}/debug-files`)).status).toBe(404);
    expect((await t.request("GET", `/v3/automations/runs/${bobsRun}/debug-files/plan.csv`)).status).toBe(404);
    const runs = await t.request("GET", "/v3/automations/runs");
    expect(JSON.stringify(runs.body)).not.toContain(bobsRun);
    const logs = await t.request("POST", "/v3/logs", { job_id: bobsRun, identifier: "A1" });
    expect(logs.status).toBe(200);
    expect((logs.body.results as { found: number }).found).toBe(0);
  });

  it.each(["..%2F..%2Fstate.db", "%2e%2e%2f%2e%2e%2fsecret.key", "..%5C..%5Cstate.db", "source%2F..%2F..%2F..%2Fstate.db", "%2Fetc%2Fpasswd"])(
    "a debug-file name %s that leaves the run's folder is refused",
    async (name) => {
      const res = await t.request("GET", `/v3/automations/runs/${bobsRun}/debug-files/${name}`, undefined, bob);
      expect([400, 404]).toContain(res.status);
      expect(res.text).not.toContain("SQLite format");
      expect(res.text).not.toContain("root:");
    },
  );

  it.each([
    ["a header value with CRLF", { "X-Shop": "a\r\nX-Injected: 1" }],
    ["a header value with a bare LF", { "X-Shop": "a\nX-Injected: 1" }],
    ["a header name with a space", { "X Shop": "a" }],
  ])("%s in an http connection is refused at save, naming the header", async (_label, headers) => {
    const def = stockDefinition({ connection: { type: "http", address: "https://feeds.example.test/stock.csv", payload: {}, headers } });
    const res = await t.request("POST", "/v3/automations/custom", def);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/connection\.headers/);
  });

  it("a 50 MB body is refused with 413 naming the limit, and the daemon goes on", async () => {
    const huge = JSON.stringify({ ...stockDefinition(), notes: "x".repeat(50 * 1024 * 1024) });
    const res = await fetch(`${t.daemon.url}/v3/automations/custom`, { method: "POST", headers: { ...t.headers, "Content-Type": "application/json" }, body: huge });
    expect(res.status).toBe(413);
    expect(await res.text()).toMatch(/MB/);
    expect((await t.request("GET", "/v3/automations/custom")).status).toBe(200);
  });
});
