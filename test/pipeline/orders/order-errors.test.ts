import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allOrders, openOrderEnv, orderByNumber, putFeed, readDebug, run, runLogs, seedOrder, storageImport, type OrderEnv } from "./order-env.js";

/**
 * A bad row never stops the good ones: a status the service does not accept
 * is a row error with its line and the allowed values; an order the service
 * refuses in a bulk body fails alone, keeps its old snapshot and is sent
 * again by the next diff run.
 */
describe("order import: row errors and refused orders", () => {
  let env: OrderEnv;
  beforeAll(async () => {
    env = await openOrderEnv();
    for (const n of ["B-1", "B-2", "B-3"]) await seedOrder(env, { ordernumber: n, channel: "err", total: "5.00", status: "PENDING", items: [{ sku: "X", quantity: "1" }] });
  });
  afterAll(() => env.close());

  it("a status outside the writable set is a row error naming the line and the allowed values; the other rows apply (partial)", async () => {
    const automation = storageImport("status-feed", {
      name: "/status.*\\.csv/",
      field_map: { ordernumber: "Order", status: "Status" },
      identifier: "ordernumber",
      update: true,
      error_limit: 5,
    });
    await putFeed(env, "status.csv", "Order,Status\nB-1,ready\nB-2,CANCELED\nB-3,COMPLETE\n");
    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("partial");
    expect(record.counts).toMatchObject({ rows: 3, row_errors: 1, update: 2, failed: 0 });
    const errors = await readDebug(env, record, "errors.csv");
    expect(errors).toContain('3,B-2,"status ""CANCELED"" is not a status the service accepts (allowed: INCOMPLETE, READY, PENDING, ORDERED, DROPSHIPPED, COMPLETE, ARCHIVED)"');
    expect((await orderByNumber(env, "B-1")).status).toBe("READY");
    expect((await orderByNumber(env, "B-2")).status).toBe("PENDING");
    expect((await orderByNumber(env, "B-3")).status).toBe("COMPLETE");
  });

  it("a status a service action sets is checked against the writable set too", async () => {
    const automation = storageImport("status-acted", {
      name: "/acted.*\\.csv/",
      field_map: { ordernumber: "Order", status: "Status" },
      identifier: "ordernumber",
      update: true,
      error_limit: 5,
      service_actions: [{ search: "ordernumber:=B-1", setValue: { status: "shipped" } }, { search: "ordernumber:=B-3", setValue: { status: "ready" } }],
    });
    await putFeed(env, "acted.csv", "Order,Status\nB-1,PENDING\nB-3,COMPLETE\n");
    const record = await run(env, automation, "debug");
    expect(record.counts).toMatchObject({ rows: 2, row_errors: 1 });
    const errors = await readDebug(env, record, "errors.csv");
    expect(errors).toContain('2,B-1,"service_actions: status ""shipped"" is not a status the service accepts');
    // A valid value in another case is written as the service spells it.
    expect(await readDebug(env, record, "plan.csv")).toMatch(/^update,update,B-3,status,[A-Z]+,READY,changed\r?$/m);
  });

  it("over error_limit the run stops before writing", async () => {
    const automation = storageImport("status-strict", {
      name: "/strict.*\\.csv/",
      field_map: { ordernumber: "Order", status: "Status" },
      identifier: "ordernumber",
      update: true,
    });
    await putFeed(env, "strict.csv", "Order,Status\nB-1,PENDING\nB-2,SHIPPED\n");
    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("failed");
    expect(record.guard?.name).toBe("error_limit");
    expect(record.requests.write).toBe(0);
    expect((await orderByNumber(env, "B-1")).status).toBe("READY");
  });

  const creates = storageImport("new-orders", {
    name: "/new.*\\.csv/",
    field_map: { ordernumber: "Order", channel: "Channel", total: "Total", "items.sku": "SKU", "items.quantity": "Qty" },
    identifier: "ordernumber",
    create: true,
    update: true,
  });

  it("an order the service refuses in a bulk body fails alone; the others are created (partial)", async () => {
    // Same columns for all three, so one body; the service's limit on a line's sku (100 characters) refuses C-2.
    await putFeed(env, "new-1.csv", `Order,Channel,Total,SKU,Qty\nC-1,web,10.00,P1,1\nC-2,web,20.00,${"S".repeat(120)},2\nC-3,web,12.00,P2,1\n`);
    const record = await run(env, creates, "prod");
    expect(record.outcome).toBe("partial");
    expect(record.counts).toMatchObject({ create: 3, failed: 1 });
    expect(record.requests.write).toBe(1);
    const numbers = (await allOrders(env)).map((o) => o.ordernumber);
    expect(numbers).toEqual(expect.arrayContaining(["C-1", "C-3"]));
    expect(numbers).not.toContain("C-2");
    const logs = await runLogs(env, record.id);
    const c2 = logs.find((l) => l.identifier === "C-2");
    expect(c2).toMatchObject({ action: "create", result: "error", type: "order", operation: "import", request_id: "bulk-1.json" });
    expect(JSON.parse(String(c2?.message))).toEqual({ error: expect.stringContaining("items[0].sku is 120 characters; the limit is 100") });
    expect(logs.filter((l) => l.result === "success").map((l) => l.identifier).sort()).toEqual(["C-1", "C-3"]);
    // A live run's errors.csv and record say the same, with no error: the run is partial.
    expect(await readDebug(env, record, "errors.csv")).toMatch(/^line,identifier,message\r?\n,C-2,.*items\[0\]\.sku is 120 characters; the limit is 100/);
    expect(record.failures).toEqual([{ message: expect.stringContaining("items[0].sku is 120 characters; the limit is 100"), count: 1, examples: ["C-2"] }]);
    expect(record.error).toBeNull();
  });

  it("the next diff run sends only the failed order (fixed in the file) and leaves the applied ones alone", async () => {
    await putFeed(env, "new-2.csv", "Order,Channel,Total,SKU,Qty\nC-1,web,10.00,P1,1\nC-2,web,20.00,P1,2\nC-3,web,12.00,P2,1\n");
    const record = await run(env, creates, "prod", { diff: true });
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ create: 1, unchanged: 2, failed: 0 });
    expect(record.requests.write).toBe(1);
    expect((await orderByNumber(env, "C-2")).total).toBe("20.00");
  });

  it("a body the service refuses as a whole fails every order in it (failed outcome), and the run says why", async () => {
    await putFeed(env, "new-3.csv", "Order,Channel,Total,SKU,Qty\nD-1,web,,P1,1\nD-2,web,,P1,1\n");
    const record = await run(env, creates, "prod");
    expect(record.outcome).toBe("failed");
    expect(record.counts).toMatchObject({ create: 2, failed: 2 });
    const logs = await runLogs(env, record.id);
    expect(logs.map((l) => [l.identifier, l.result]).sort()).toEqual([["D-1", "error"], ["D-2", "error"]]);
    expect(String(logs[0]?.message)).toContain("total is required");
    expect(record.error).toMatchObject({ code: "records_failed", message: expect.stringMatching(/^2 records refused by the service: .*total is required.*\(2: D-1, D-2\)$/) });
    expect(record.failures?.[0]).toMatchObject({ count: 2, examples: ["D-1", "D-2"] });
  });

  it("an identifier two active orders share is a row error, not a guess", async () => {
    await seedOrder(env, { ordernumber: "DUP-1", channel: "web", total: "1.00", items: [{ sku: "X", quantity: "1" }] });
    await seedOrder(env, { ordernumber: "DUP-1", channel: "market", total: "1.00", items: [{ sku: "X", quantity: "1" }] });
    const automation = storageImport("dup-feed", { name: "/dup.*\\.csv/", field_map: { ordernumber: "Order", status: "Status" }, identifier: "ordernumber", update: true, error_limit: 5 });
    await putFeed(env, "dup.csv", "Order,Status\nDUP-1,READY\nB-3,COMPLETE\n");
    const record = await run(env, automation, "debug");
    expect(record.counts).toMatchObject({ row_errors: 1, unchanged: 1 });
    expect(await readDebug(env, record, "errors.csv")).toMatch(/2,DUP-1,"""DUP-1"" names 2 orders in the service \(oids \d+, \d+\): identify orders by oid or order/);
  });
});
