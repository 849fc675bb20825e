import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, waitFor, type Harness } from "./helpers.js";

type Log = Record<string, unknown>;
interface LogAnswer {
  status: number;
  results: { found: number; found_more_logs?: boolean; logs: Log[]; records: string; sort: string; start: number };
  body: Record<string, unknown>;
}

describe("embedded service: log search (v3 parts 2.4, 4.4; v1 part 4.6)", () => {
  let h: Harness;
  const search = async (params: Record<string, string>, path = "/v3/logs"): Promise<LogAnswer> => {
    const { status, body } = await h.json("POST", path, params);
    return { status, results: body.results as LogAnswer["results"], body };
  };

  beforeAll(async () => {
    h = await startHarness();
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "L1", title: "Logged", price: "1" });
    await h.form("/v1/editor/items/edit", { identifier: "guid", guid: "L1", price: "2" });
    await h.json("POST", "/v3/orders", { ordernumber: "O1", channel: "shop", total: "1", items: [{ sku: "L1", price: "1", quantity: "1" }] });
  });
  afterAll(() => h.close());

  it("every item change writes a record with all fields of part 2.4 in their types", async () => {
    const { status, results, body } = await search({ identifier: "L1" });
    expect(status).toBe(200);
    expect(typeof body.timestamp).toBe("string");
    expect(results.found).toBe(2);
    const [edit, add] = results.logs as [Log, Log];
    expect([edit.action, add.action]).toEqual(["edit", "add"]);
    for (const key of ["action", "channel_id", "context", "field_data", "id", "identifier", "job_id", "integration", "message", "method", "operation", "request_id", "result", "sd_user_id", "timestamp", "type"]) {
      expect(typeof edit[key], key).toBe("string");
    }
    for (const key of ["instance", "log_level", "sd_acct_id"]) expect(typeof edit[key], key).toBe("number");
    expect(JSON.parse(String(edit.message))).toMatchObject({ message: expect.any(String) });
    expect(edit).toMatchObject({ method: "api", type: "item", result: "success", identifier: "L1" });
    expect(JSON.parse(String(edit.field_data))).toMatchObject({ price: "2" });
    expect(String(edit.timestamp)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it("order changes are logged too, and v1 POST /logs answers the same search", async () => {
    const v3 = await search({ identifier: "shopO1" });
    expect(v3.results.logs[0]).toMatchObject({ type: "order", result: "success" });
    const v1 = await search({ identifier: "shopO1" }, "/v1/logs");
    expect(v1.results.found).toBe(1);
    const form = await h.form("/v1/logs", { identifier: "L1,shopO1" });
    expect((form.body.results as LogAnswer["results"]).found).toBe(3);
  });

  it("bulk rows are logged with method bulk, job_id and request_id = bulk_file", async () => {
    const form = new FormData();
    form.append("bulk_file", new Blob(["action,guid,title\nadd,BL1,Bulk logged\nedit,BLX,nothing\n"]), "b.csv");
    const answer = (await (await h.call("POST", "/v1/bulk", form, { "X-Auth-Integration": "bulk-partner" })).json()) as Record<string, unknown>;
    await waitFor(async () => ((await h.json("GET", `/v1/bulk/results/${String(answer.bulk_file)}`)).body.status === "complete" ? true : undefined), "bulk");
    const { results } = await search({ request_id: String(answer.bulk_file) });
    expect(results.found).toBe(2);
    expect(results.logs.every((l) => l.method === "bulk" && l.job_id === String(answer.job_id))).toBe(true);
    // The uploader's integration, as for single calls: a search by it finds what its bulk files changed.
    expect(results.logs.every((l) => l.integration === "bulk-partner")).toBe(true);
    expect(results.logs.map((l) => l.result).sort()).toEqual(["error", "success"]);
    const errors = await search({ request_id: String(answer.bulk_file), result: "error" });
    expect(errors.results.found).toBe(1);
  });

  it("context, integration (from X-Auth-Integration), instance and id narrow the search", async () => {
    await h.call("POST", "/v1/editor/items/edit", new URLSearchParams({ identifier: "guid", guid: "L1", price: "3" }), { "X-Auth-Integration": "partner-x" });
    const byIntegration = await search({ integration: "partner-x,other" });
    expect(byIntegration.results.found).toBe(1);
    const log = byIntegration.results.logs[0] as Log;
    expect(log).toMatchObject({ integration: "partner-x", identifier: "L1", context: "service", instance: 0 });
    expect((await search({ id: String(log.id) })).results.logs.map((l) => l.id)).toEqual([log.id]);
    expect((await search({ context: "service", identifier: "L1" })).results.found).toBe(3);
    expect((await search({ context: "amazon" })).results.found).toBe(0);
    expect((await search({ instance: "0", identifier: "L1" })).results.found).toBe(3);
    expect((await search({ instance: "2", identifier: "L1" })).results.found).toBe(0);
    expect((await search({ instance: "1" })).status).toBe(400);
  });

  it("refining fields apply only together with a search field", async () => {
    const alone = await search({ action: "edit" });
    const withSearch = await search({ action: "edit", identifier: "L1" });
    expect(alone.results.found).toBeGreaterThan(withSearch.results.found);
    expect(withSearch.results.found).toBe(2);
  });

  it("records is 1 to 50, default 20; out of range is refused", async () => {
    expect((await search({})).results.records).toBe("20");
    expect((await search({ records: "0" })).status).toBe(400);
    expect((await search({ records: "51" })).status).toBe(400);
    const v1 = await search({ records: "51" }, "/v1/logs");
    expect(v1.status).toBe(400);
    expect(v1.body.result).toBe("failure");
  });

  it("timestamp_start and timestamp_end go as a pair in Y-m-d H:i:s", async () => {
    expect((await search({ timestamp_start: "2020-01-01 00:00:00" })).status).toBe(400);
    expect((await search({ timestamp_start: "2020-01-01", timestamp_end: "2099-01-01" })).status).toBe(400);
    const all = await search({ timestamp_start: "2020-01-01 00:00:00", timestamp_end: "2099-01-01 00:00:00" });
    expect(all.results.found).toBeGreaterThan(0);
    expect((await search({ timestamp_start: "2020-01-01 00:00:00", timestamp_end: "2020-01-02 00:00:00" })).results.found).toBe(0);
  });

  it("pages with start and records; found is capped at 1001 with found_more_logs", async () => {
    const source = { method: "bulk" as const, requestId: "many", jobId: "7", integration: "" };
    h.svc.context.db.transaction(() => {
      for (let i = 0; i < 1100; i += 1) h.svc.context.logs.write({ source, type: "item", action: "edit", identifier: `M${i}`, result: "success", message: "x" });
    })();
    const first = await search({ request_id: "many", records: "50" });
    expect(first.results.found).toBe(1001);
    expect(first.results.found_more_logs).toBe(true);
    expect(first.results.logs).toHaveLength(50);
    const second = await search({ request_id: "many", records: "50", start: "50" });
    expect(second.results.start).toBe(50);
    expect(second.results.logs[0]?.identifier).not.toBe(first.results.logs[0]?.identifier);
    expect(Number(second.results.logs[0]?.id)).toBe(Number(first.results.logs[49]?.id) - 1);
    const query = await h.json("POST", "/v3/logs?request_id=many&records=5");
    expect((query.body.results as LogAnswer["results"]).logs).toHaveLength(5);
    const exact = await search({ identifier: "M1,M2,M3" });
    expect(exact.results.found).toBe(3);
    expect(exact.results.found_more_logs).toBeUndefined();
  });
});
