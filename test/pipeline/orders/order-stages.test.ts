import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../../src/definition/index.js";
import { OrderBodyBatcher, orderRows } from "../../../src/pipeline/import/order-bodies.js";
import { matchList } from "../../../src/pipeline/import/order-lines.js";
import type { OrderWrite } from "../../../src/pipeline/import/plan-orders.js";
import { LOOKUP_BATCH, readOrderScope } from "../../../src/pipeline/import/scope-orders.js";
import { counted, openOrderEnv, orderByNumber, putFeed, run, seedOrder, storageImport, type OrderEnv } from "./order-env.js";

/** The order stages one at a time: list matching, bulk bodies, the batched scope lookup. */
describe("order lines against the service's order", () => {
  it("a shipment whose tracking number the order has (any case, spaces) is never sent again; a new one is added", () => {
    const result = matchList("shipments", [{ shiptracking: " 1z999 ", shipcarrier: "DHL" }, { shiptracking: "NEW-1", shipcarrier: "UPS" }], [{ shipid: "7", shiptracking: "1Z999", shipcarrier: "UPS" }]);
    expect(result.send).toEqual([{ shiptracking: "NEW-1", shipcarrier: "UPS" }]);
    expect(result.changes.map((c) => c.field)).toEqual(["shipments[2].shiptracking", "shipments[2].shipcarrier"]);
    expect(result.adds).toBe(true);
  });

  it("line items match by sku in turn: differing fields go with the order line's itemid, an extra line is added", () => {
    const service = [
      { itemid: "11", sku: "A", quantity: "1", price: "5" },
      { itemid: "12", sku: "A", quantity: "2", price: "5" },
    ];
    const result = matchList("items", [{ sku: "a", quantity: "1" }, { sku: "A", quantity: "3" }, { sku: "A", quantity: "1" }], service);
    expect(result.send).toEqual([{ itemid: "12", quantity: "3" }, { sku: "A", quantity: "1" }]);
    expect(result.changes).toContainEqual({ field: "items[2].quantity", before: "2", after: "3" });
  });

  it("entries without a key match by equality (shipdate NOW not compared); an id the order lacks goes as given", () => {
    expect(matchList("shipments", [{ shipcarrier: "UPS", shipdate: "NOW" }], [{ shipid: "1", shipcarrier: "UPS ", shipdate: "2026-03-01 10:00:00" }]).send).toEqual([]);
    expect(matchList("refunds", [{ refunddate: "2026-03-02" }], [{ refundid: "4", refunddate: "2026-03-01" }]).send).toEqual([{ refunddate: "2026-03-02" }]);
    const byId = matchList("items", [{ itemid: "99", quantity: "2" }], [{ itemid: "11", sku: "A", quantity: "1" }]);
    expect(byId.send).toEqual([{ itemid: "99", quantity: "2" }]);
    expect(byId.adds).toBe(false);
  });
});

function write(identifier: string, extra: Partial<OrderWrite> = {}): OrderWrite {
  return { action: "update", identifier, oid: identifier.replace(/\D/g, ""), scalars: { status: "READY" }, items: [], shipments: [], refunds: [], adds: false, ...extra };
}

describe("bulk bodies", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "conveyor-bodies-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("one shipment's items go as the shipitems parameter; several shipments' items into their shipdetails", () => {
    const one = orderRows(write("o1", { shipments: [{ shiptracking: "T1", shipitems: '[{"sku":"A","quantity":"2","fulfilled":"1"}]' }] }));
    expect(one).toEqual([{ oid: "1", status: "READY", shipitems: [{ sku: "A", quantity: "2", fulfilled: "1" }], "shipments.shiptracking": "T1" }]);
    const two = orderRows(write("o2", { shipments: [{ shiptracking: "T1", shipitems: '[{"sku":"A"}]' }, { shiptracking: "T2", shipitems: '[{"sku":"B"}]' }] }));
    expect(two[0]).not.toHaveProperty("shipitems");
    expect(two.map((r) => r["shipments.shipdetails"])).toEqual(['{"items":[{"sku":"A"}]}', '{"items":[{"sku":"B"}]}']);
    expect(two.map((r) => r.oid)).toEqual(["2", "2"]);
  });

  it("groups by action and column set, cuts at bulk_rows without splitting an order, keeps file order and idempotency", async () => {
    const batcher = new OrderBodyBatcher(dir, 4, 200);
    const twoLines = [{ sku: "A" }, { sku: "B" }];
    await batcher.add(write("o1", { items: twoLines, adds: true }));
    await batcher.add(write("o2"));
    await batcher.add(write("o3", { items: twoLines }));
    await batcher.add(write("o4", { items: twoLines }));
    await batcher.add({ ...write("o5"), action: "archive", scalars: {} });
    const bodies = await batcher.finish();
    expect(bodies.map((b) => [b.name, b.action, b.orders.map((o) => o.identifier), b.idempotent])).toEqual([
      ["bulk-1.json", "update", ["o1", "o3"], false],
      ["bulk-2.json", "update", ["o2"], true],
      ["bulk-3.json", "update", ["o4"], true],
      ["bulk-4.json", "archive", ["o5"], true],
    ]);
    expect(JSON.parse(await readFile(path.join(dir, "bulk-4.json"), "utf8"))).toEqual({ header: ["oid"], data: [["5"]] });
    expect(bodies[0]?.body.data).toHaveLength(4);
  });

  it("cuts at the order limit per body", async () => {
    const batcher = new OrderBodyBatcher(dir, 1000, 2);
    for (const id of ["o1", "o2", "o3"]) await batcher.add(write(id));
    expect((await batcher.finish()).map((b) => b.orders.length)).toEqual([2, 1]);
  });
});

describe("scope lookup and shipped items against the embedded service", () => {
  let env: OrderEnv;
  beforeAll(async () => {
    env = await openOrderEnv();
  });
  afterAll(() => env.close());

  it(`looks the file's orders up ${LOOKUP_BATCH} at a time, case ignored, preferring the active order to an archived one`, async () => {
    const numbers = Array.from({ length: 95 }, (_v, i) => `L-${1000 + i}`);
    for (const n of numbers) await seedOrder(env, { ordernumber: n, channel: "web", total: "1.00", items: [{ sku: "X", quantity: "1" }] });
    const old = await seedOrder(env, { ordernumber: "L-1000", channel: "old", total: "1.00", items: [{ sku: "X", quantity: "1" }] });
    await env.client.archiveOrder(old);
    const { client, counter } = counted(env);
    const config = { identifier: "ordernumber" } as FileConfig;
    const scope = await readOrderScope(client, config, [...numbers.map((n) => n.toLowerCase()), "L-missing"]);
    expect(counter.read).toBe(3);
    expect(scope.found.size).toBe(95);
    expect(scope.ambiguous.size).toBe(0);
    expect(scope.found.get("l-1000")?.channel).toBe("web");
    expect(scope.found.has("l-missing")).toBe(false);
  });

  it("shipsku/shipquantity rows of one tracking number become one shipment with its items", async () => {
    await seedOrder(env, { ordernumber: "SHIP-1", channel: "web", total: "9.00", items: [{ sku: "A", quantity: "2" }, { sku: "B", quantity: "1" }] });
    const automation = storageImport("ship-items", {
      name: "/ship.*\\.csv/",
      field_map: { ordernumber: "Order", "shipments.shiptracking": "Tracking", "shipments.shipsku": "SKU", "shipments.shipquantity": "Qty" },
      field_run: { shippingstatus: "COMPLETE" },
      identifier: "ordernumber",
      update: true,
    });
    await putFeed(env, "ship.csv", "Order,Tracking,SKU,Qty\nSHIP-1,TRK-9,A,2\nSHIP-1,TRK-9,B,1\n");
    const record = await run(env, automation, "prod");
    expect(record.outcome).toBe("success");
    const order = await orderByNumber(env, "SHIP-1");
    const shipments = order.shipments as Array<Record<string, string>>;
    expect(shipments).toHaveLength(1);
    expect(JSON.parse(shipments[0]?.shipdetails ?? "{}")).toEqual({ items: [{ sku: "A", quantity: "2", fulfilled: "1" }, { sku: "B", quantity: "1", fulfilled: "1" }] });
    expect(order.shippingstatus).toBe("COMPLETE");
    const again = await run(env, automation, "prod");
    expect(again.counts).toMatchObject({ unchanged: 1 });
    expect(again.requests.write).toBe(0);
  });
});
