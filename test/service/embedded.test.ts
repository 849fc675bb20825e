import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedService, type EmbeddedService } from "../../src/embedded/index.js";
import { ConveyorError } from "../../src/errors.js";
import { ServiceClient } from "../../src/service/client.js";
import { newCounter } from "../../src/service/http.js";
import { TokenBucketLimiter } from "../../src/service/limiter.js";

let dir = "";
let service: EmbeddedService;
let client: ServiceClient;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "conveyor-svc-"));
  service = await startEmbeddedService({ dataDir: dir, apiUser: "demo", apiToken: "emb-t0ken-1234567890", readLimit: 10_000, writeLimit: 10_000 });
  client = new ServiceClient({
    baseUrl: service.url,
    apiUser: service.apiUser,
    apiToken: service.apiToken,
    integration: "conveyor",
    limiter: new TokenBucketLimiter({ limits: { read: 10_000, write: 10_000 } }),
  });
});
afterAll(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rejected(promise: Promise<unknown>): Promise<ConveyorError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof ConveyorError) return err;
  throw new Error(`expected a ConveyorError, got ${String(err)}`);
}

describe("typed calls round-trip against the embedded service", () => {
  it("authenticates, and refuses a wrong token with a clear, token-free error", async () => {
    expect(await client.profile()).toMatchObject({});
    const wrong = new ServiceClient({ baseUrl: service.url, apiUser: "demo", apiToken: "wrong-t0ken-abcdef", limiter: new TokenBucketLimiter() });
    const err = await rejected(wrong.profile());
    expect(err.details).toMatchObject({ status: 401, method: "GET", path: "/v1/auth" });
    expect(err.hint).toContain("api_token");
    expect(JSON.stringify(err.toJSON())).not.toContain("wrong-t0ken-abcdef");
  });

  it("adds, edits, reads, searches, pages and deletes items", async () => {
    const counter = newCounter();
    const run = client.withCounter(counter);
    await run.itemAction("add", "0700", { title: "Lamp", price: "9.50" });
    await run.itemAction("add", "B-2", { title: "Desk", price: "120" });
    const dup = await rejected(run.itemAction("add", "0700", { title: "again" }));
    expect(dup.code).toBe("service_rejected");
    expect(dup.message).toContain("POST /v1/editor/items/add");
    await run.itemAction("edit", "0700", { price: "11" });
    const lamp = await run.getItem({ guid: "0700" });
    expect(lamp).toMatchObject({ guid: "0700", title: "Lamp", price: "11" });
    expect(await run.getItemById(lamp?.id ?? "")).toMatchObject({ guid: "0700" });
    expect(await run.getItem({ guid: "nope" })).toBeNull();
    expect(await run.getItemById("abc")).toBeNull();
    const found = await run.searchItems("title:=Desk");
    expect(found.items.map((i) => i.guid)).toEqual(["B-2"]);
    const all: string[] = [];
    for await (const page of run.pageItems({ sort: "guid" })) all.push(...page.map((i) => i.guid ?? ""));
    expect(all.sort()).toEqual(["0700", "B-2"]);
    await run.itemAction("delete", "B-2");
    expect(await run.getItem({ guid: "B-2" })).toBeNull();
    expect(counter.write).toBe(5);
    expect(counter.read).toBeGreaterThanOrEqual(7);
  });

  it("submits a bulk file, waits for it and streams its per-row results", async () => {
    const file = path.join(dir, "bulk-a.csv");
    writeFileSync(file, "action,guid,title,price\nadd,C-1,Chair,30\nadd,0700,Dup,1\nedit,C-404,Ghost,2\nadd,C-2,\"Stool, tall\",45\n");
    const submitted = await client.submitBulk(file, { name: "t-bulk-1", skipAll: true });
    expect(submitted.rows).toBe(4);
    const status = await client.waitBulk(submitted.bulk_file, { pollMs: 50 });
    expect(status).toMatchObject({ status: "complete", rows: 4, succeeded: 2, failed: 2 });
    const rows = [];
    for await (const row of client.bulkResultRows(status.url ?? "")) rows.push(row);
    expect(rows.map((r) => [r.row, r.action, r.guid, r.result])).toEqual([
      [1, "add", "C-1", "success"],
      [2, "add", "0700", "error"],
      [3, "edit", "C-404", "error"],
      [4, "add", "C-2", "success"],
    ]);
    expect(await client.getItem({ guid: "C-2" })).toMatchObject({ title: "Stool, tall" });
    const jobs = await client.bulkJobs(new Date().toISOString().slice(0, 10));
    expect(jobs.find((j) => j.bulk_name === "t-bulk-1")).toMatchObject({ bulk_file: submitted.bulk_file });
  });

  it("exports items as a streamed CSV whose identifiers stay text", async () => {
    const records = [];
    for await (const record of client.exportRecords({ type: "items", search: "guid:=0700", fields: ["title", "price"] }, { pollMs: 50 })) records.push(record);
    expect(records).toEqual([expect.objectContaining({ guid: "0700", title: "Lamp", price: "11" })]);
  });

  it("creates, lists, pages, reads, updates, archives, combines and splits orders", async () => {
    const created = await client.createOrder({ ordernumber: "1001", channel: "shop", total: "20", items: [{ sku: "0700", quantity: "2", price: "10" }] });
    expect(created.oid).toBeGreaterThan(0);
    expect(created.successful[0]?.code).toBe(1);
    const bulk = await client.createOrders({
      header: ["ordernumber", "channel", "total", "items.sku", "items.quantity"],
      data: [
        ["1002", "shop", "5", "C-1", "1"],
        ["1003", "shop", "7", "C-2", "1"],
      ],
    });
    expect(bulk.successful).toHaveLength(2);
    const invalid = await rejected(client.createOrder({ ordernumber: "x".repeat(101), total: "1", items: [{ sku: "a" }] }));
    expect(invalid.details).toMatchObject({ method: "POST", path: "/v3/orders", status: 400 });
    expect(invalid.message).toContain("ordernumber");
    const list = await client.listOrders({ q: "channel:=shop", sort: "ordernumber", sortorder: "desc" });
    expect(list.orders.map((o) => o.ordernumber)).toEqual(["1003", "1002", "1001"]);
    const pages: number[] = [];
    for await (const page of client.pageOrders({ q: "channel:=shop" })) pages.push(page.length);
    expect(pages.reduce((a, b) => a + b, 0)).toBe(3);
    const oid = created.oid ?? 0;
    expect(await client.getOrder(oid)).toMatchObject({ ordernumber: "1001" });
    expect(await client.getOrder(999_999)).toBeNull();
    const byOrder = await client.getOrder(String((await client.getOrder(oid))?.order));
    expect(byOrder).toMatchObject({ ordernumber: "1001" });
    await client.updateOrder(oid, { shippingstatus: "COMPLETE" });
    expect(await client.getOrder(oid)).toMatchObject({ shippingstatus: "COMPLETE" });
    await client.archiveOrder(oid);
    expect(String((await client.getOrder(oid))?.archived)).toMatch(/^(1|true)$/);
    const lineitems = await client.listOrders({ shortcut: "lineitem", q: "ordernumber:=1002" });
    expect(lineitems.orders.length).toBeGreaterThan(0);
    const [a, b] = (await client.listOrders({ q: "(ordernumber:=1002 ordernumber:=1003)", sort: "ordernumber", sortorder: "asc" })).orders;
    expect([a?.ordernumber, b?.ordernumber]).toEqual(["1002", "1003"]);
    const combined = await client.combineOrders({ oid: String(a?.oid), oidconsolidate: String(b?.oid) });
    expect(combined.successful.length).toBeGreaterThan(0);
    // `oid` is combined into `oidconsolidate`, the parent.
    expect(((await client.getOrder(String(b?.oid)))?.items as unknown[]).length).toBe(2);
    const split = await client.splitOrder({ oid: String(b?.oid) });
    expect(split.successful.map((s) => s.code)).toEqual([1, 1]);
  });

  it("searches the logs through v3 and v1", async () => {
    const v3 = await client.searchLogs({ identifier: "0700", records: 50 });
    expect(v3.found).toBeGreaterThan(0);
    expect(v3.logs.every((l) => l.identifier === "0700")).toBe(true);
    const v1 = await client.searchLogsV1({ identifier: "C-1" });
    expect(v1.logs.length).toBeGreaterThan(0);
  });
});
