import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Order } from "../../../src/service/index.js";
import { allOrders, debugNames, openOrderEnv, orderByNumber, putFeed, readDebug, run, runLogs, seedOrder, storageImport, type OrderEnv } from "./order-env.js";

/**
 * Order imports end to end against the embedded service: rows sharing an
 * identifier become one order with several line items, existing orders are
 * updated with only what differs, a re-run changes nothing, orders in scope
 * the file does not name are archived (within remove_limit).
 */
type Line = Record<string, string>;
const lines = (o: Order): Line[] => (o.items as Line[] | undefined) ?? [];

describe("order import: create, update, re-run", () => {
  let env: OrderEnv;
  beforeAll(async () => {
    env = await openOrderEnv();
  });
  afterAll(() => env.close());

  const automation = storageImport("web-orders", {
    name: "/orders.*\\.csv/",
    field_map: {
      ordernumber: "Order",
      channel: "Channel",
      total: "Total",
      email: "Email",
      status: "Status",
      "billing.city": "City",
      "items.sku": "SKU",
      "items.quantity": "Qty",
      "items.price": "Price",
    },
    identifier: "ordernumber",
    create: true,
    update: true,
  });

  const FEED = [
    "Order,Channel,Total,Email,Status,City,SKU,Qty,Price",
    "A-1,web,30.00,a@x.test,PENDING,Berlin,P1,1,10",
    "A-2,web,15.00,b@x.test,READY,Paris,P3,1,15",
    "A-1,web,30.00,a@x.test,PENDING,Berlin,P2,2,10",
  ].join("\n");

  it("debug run: plans two creates from three rows, writes the JSON body a live run would send, creates nothing", async () => {
    await putFeed(env, "orders-1.csv", FEED);
    const record = await run(env, automation, "debug");
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ rows: 3, row_errors: 0, create: 2, update: 0, unchanged: 0, failed: 0 });
    expect(record.requests.write).toBe(0);
    expect(await allOrders(env)).toEqual([]);
    expect(await debugNames(env, record)).toEqual(expect.arrayContaining(["bulk-1.json", "plan.csv", "records.csv", "summary.json", "source"]));
    const body = JSON.parse(await readDebug(env, record, "bulk-1.json")) as { header: string[]; data: string[][] };
    const cell = (row: string[], column: string): string | undefined => row[body.header.indexOf(column)];
    expect(body.data).toHaveLength(3);
    // The second row of A-1 carries its key and the second line only.
    const [first, second, third] = body.data as [string[], string[], string[]];
    expect([cell(first, "ordernumber"), cell(first, "total"), cell(first, "items.sku")]).toEqual(["A-1", "30.00", "P1"]);
    expect([cell(second, "ordernumber"), cell(second, "total"), cell(second, "items.sku"), cell(second, "items.quantity")]).toEqual(["A-1", "", "P2", "2"]);
    expect([cell(third, "ordernumber"), cell(third, "items.sku")]).toEqual(["A-2", "P3"]);
    const plan = await readDebug(env, record, "plan.csv");
    expect(plan).toContain("create,create,A-1,items[2].sku,,P2");
    expect(plan).toContain("create,create,A-2,billing.city,,Paris");
  });

  it("live run: creates the orders with all their lines; log records say create, type order", async () => {
    const record = await run(env, automation, "prod");
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ create: 2, failed: 0 });
    expect(record.requests.write).toBe(1);
    const a1 = await orderByNumber(env, "A-1");
    expect(a1).toMatchObject({ channel: "web", total: "30.00", status: "PENDING", email: "a@x.test" });
    expect((a1.billing as Line).city).toBe("Berlin");
    expect(lines(a1).map((l) => [l.sku, l.quantity, l.price])).toEqual([["P1", "1", "10"], ["P2", "2", "10"]]);
    expect(lines(await orderByNumber(env, "A-2")).map((l) => l.sku)).toEqual(["P3"]);
    const logs = await runLogs(env, record.id);
    expect(logs.map((l) => [l.identifier, l.action, l.result, l.type, l.operation, l.request_id]).sort()).toEqual([
      ["A-1", "create", "success", "order", "import", "bulk-1.json"],
      ["A-2", "create", "success", "order", "import", "bulk-1.json"],
    ]);
  });

  it("the same file again: every order unchanged, no write (lines matched by sku, not added again)", async () => {
    await putFeed(env, "orders-1b.csv", FEED);
    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ create: 0, update: 0, unchanged: 2 });
    expect(record.requests.write).toBe(0);
    expect(lines(await orderByNumber(env, "A-1"))).toHaveLength(2);
  });

  it("an update sends only what changed: a status, one line's quantity (with its itemid), a new line", async () => {
    const before = await orderByNumber(env, "A-1");
    await putFeed(
      env,
      "orders-2.csv",
      ["Order,Channel,Total,Email,Status,City,SKU,Qty,Price", "A-1,web,30.00,a@x.test,READY,Berlin,P1,1,10", "A-1,web,30.00,a@x.test,READY,Berlin,P2,3,10", "A-1,web,30.00,a@x.test,READY,Berlin,P4,1,5"].join("\n"),
    );
    const debug = await run(env, automation, "debug");
    const plan = await readDebug(env, debug, "plan.csv");
    expect(plan).toContain("update,update,A-1,status,PENDING,READY");
    expect(plan).toContain("update,update,A-1,items[2].quantity,2,3");
    expect(plan).toContain("update,update,A-1,items[3].sku,,P4");
    expect(plan).not.toContain("items[1]");
    const body = JSON.parse(await readDebug(env, debug, "bulk-1.json")) as { header: string[]; data: unknown[][] };
    expect(body.header).toEqual(["oid", "status", "items.itemid", "items.quantity", "items.sku", "items.price"]);
    const p2 = lines(before).find((l) => l.sku === "P2");
    expect(body.data).toEqual([
      [before.oid, "READY", p2?.itemid, "3", "", ""],
      [before.oid, "", "", "1", "P4", "5"],
    ]);

    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ update: 1, create: 0, unchanged: 0 });
    const after = await orderByNumber(env, "A-1");
    expect(after.status).toBe("READY");
    expect(lines(after).map((l) => [l.sku, l.quantity])).toEqual([["P1", "1"], ["P2", "3"], ["P4", "1"]]);
    expect(after.oid).toBe(before.oid);
  });
});

describe("order import: archive orders in scope the file does not name", () => {
  let env: OrderEnv;
  beforeAll(async () => {
    env = await openOrderEnv();
    for (const n of ["S-1", "S-2", "S-3", "S-4", "S-5"]) {
      await seedOrder(env, { ordernumber: n, channel: "shop", total: "9.00", status: "READY", items: [{ sku: "X", quantity: "1" }] });
    }
    // Another channel: outside `search`, never archived.
    await seedOrder(env, { ordernumber: "M-1", channel: "market", total: "9.00", items: [{ sku: "X", quantity: "1" }] });
  });
  afterAll(() => env.close());

  const OPEN_ORDERS = {
    name: "/open.*\\.csv/",
    field_map: { ordernumber: "Order", status: "Status" },
    identifier: "ordernumber",
    search: "channel:=shop archived:=0",
    update: true,
    remove: true,
  };
  const automation = storageImport("open-orders", OPEN_ORDERS);
  const feed = (...numbers: string[]): string => ["Order,Status", ...numbers.map((n) => `${n},READY`)].join("\n");
  const archived = async (): Promise<string[]> => (await allOrders(env)).filter((o) => o.archived === "1").map((o) => String(o.ordernumber)).sort();

  it("archives the one order missing from the file (1 of 5, within the default 20 %)", async () => {
    await putFeed(env, "open-1.csv", feed("S-1", "S-2", "S-3", "S-4"));
    const debug = await run(env, automation, "debug");
    expect(debug.counts).toMatchObject({ unchanged: 4, remove: 1 });
    expect(await readDebug(env, debug, "plan.csv")).toContain("remove,archive,S-5");
    expect(JSON.parse(await readDebug(env, debug, "bulk-1.json"))).toEqual({ header: ["oid"], data: [[(await orderByNumber(env, "S-5")).oid]] });
    expect(await archived()).toEqual([]);

    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ unchanged: 4, remove: 1, failed: 0 });
    expect(await archived()).toEqual(["S-5"]);
    const logs = await runLogs(env, record.id);
    expect(logs.map((l) => [l.identifier, l.action, l.result])).toEqual([["S-5", "archive", "success"]]);
  });

  it("an order the file names but a skip rule drops is not archived", async () => {
    await putFeed(env, "open-1.csv", feed("S-1", "S-2", "S-3", "S-4"));
    const skipping = storageImport("open-orders-skip", { ...OPEN_ORDERS, vendor_actions: [{ search: "ordernumber:=S-4", skip: true }] });
    const debug = await run(env, skipping, "debug");
    expect(debug.counts).toMatchObject({ unchanged: 3, skipped: 1, remove: 0 });
  });

  it("remove_limit stops a run that would archive too many, naming the numbers; --force lets it through", async () => {
    await putFeed(env, "open-2.csv", feed("S-1"));
    const stopped = await run(env, automation, "prod");
    expect(stopped.outcome).toBe("failed");
    expect(stopped.guard?.name).toBe("remove_limit");
    expect(stopped.guard?.message).toContain("remove 3 of 4");
    expect(stopped.requests.write).toBe(0);
    expect(await archived()).toEqual(["S-5"]);

    const forced = await run(env, automation, "prod", { force: true });
    expect(forced.outcome).toBe("success");
    expect(forced.counts).toMatchObject({ remove: 3 });
    expect(await archived()).toEqual(["S-2", "S-3", "S-4", "S-5"]);
    expect((await orderByNumber(env, "M-1")).archived).toBe("0");
  });

  it("an empty feed with remove set archives nothing, forced or not", async () => {
    await putFeed(env, "open-3.csv", "Order,Status\n");
    const record = await run(env, automation, "prod", { force: true });
    expect(record.guard?.name).toBe("empty_feed");
    expect(await archived()).toEqual(["S-2", "S-3", "S-4", "S-5"]);
  });
});
