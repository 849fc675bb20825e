import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";

type Order = Record<string, unknown> & { oid: string; items: Record<string, unknown>[]; shipments: Record<string, unknown>[] };

function order(n: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ordernumber: n,
    channel: "shop",
    total: "30.00",
    email: `${n}@example.com`,
    billing: { firstname: "Ada", streetl: "1 Main St", city: "Berlin" },
    items: [{ sku: "P1", title: "Widget", price: "10", quantity: "3" }],
    ...extra,
  };
}

describe("embedded service: v3 orders (v3 parts 2.3, 3, 4.3, 7, 8)", () => {
  let h: Harness;
  const orders = async (query = ""): Promise<{ status: number; count: string; orders: Order[]; body: Record<string, unknown> }> => {
    const { status, body } = await h.json("GET", `/v3/orders${query}`);
    return { status, count: String(body.count), orders: (body.orders ?? []) as Order[], body };
  };
  const one = async (id: string | number): Promise<Order> => {
    const { body } = await h.json("GET", `/v3/orders/${id}`);
    return (body.orders as Order[])[0] as Order;
  };

  beforeAll(async () => {
    h = await startHarness();
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "P1", title: "Widget from catalogue", price: "10", weight: "2" });
  });
  afterAll(() => h.close());

  it("creates one order: code 1 and oid as a number", async () => {
    const { status, body } = await h.json("POST", "/v3/orders", order("A1"));
    expect(status).toBe(200);
    expect(typeof body.oid).toBe("number");
    expect(body.results).toEqual({ successful: [{ code: 1, message: expect.any(String) }] });
  });

  it("reads orders with string fields, street1, item details and the listing envelope", async () => {
    const { status, count, orders: list, body } = await orders();
    expect(status).toBe(200);
    expect(count).toBe("1");
    expect(String(body.timestamp)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const o = list[0] as Order;
    expect(o).toMatchObject({ ordernumber: "A1", channel: "shop", order: "shopA1", archived: "0", total: "30.00", oidconsolidate: "" });
    expect(typeof o.oid).toBe("string");
    expect(o.billing).toMatchObject({ street1: "1 Main St", city: "Berlin", country: "" });
    const line = o.items[0] as Record<string, unknown>;
    expect(line).toMatchObject({ sku: "P1", price: "10", quantity: "3", weight: "2" });
    expect(line.itemdetails).toMatchObject({ "order-item-id": line.itemid, product: { guid: "P1", title: "Widget from catalogue" } });
    expect(o.internalnotes).toEqual([]);
    expect(o.shipments).toEqual([]);
  });

  it("creates many orders from {header, data}; dotted headers build addresses and lines, rows of one order merge", async () => {
    const { status, body } = await h.json("POST", "/v3/orders", {
      header: ["ordernumber", "channel", "total", "billing.city", "items.sku", "items.quantity", "shipments.shiptracking"],
      data: [
        ["B1", "market", "5", "Paris", "X1", "1", "TRK1"],
        ["B1", "market", "", "", "X2", "2", "TRK1"],
        ["B2", "market", "7", "Rome", "X3", "1", ""],
      ],
    });
    expect(status).toBe(200);
    const successful = (body.results as { successful: Record<string, unknown>[] }).successful;
    expect(successful.map((s) => s.code)).toEqual([1, 1]);
    expect(typeof body.oid).toBe("number");
    const b1 = await one("marketB1");
    expect(b1.items.map((i) => i.sku)).toEqual(["X1", "X2"]);
    expect(b1.shipments).toHaveLength(1);
    expect(b1.billing).toMatchObject({ city: "Paris" });
  });

  it("a bulk create lets good orders through and reports bad ones under failed by index", async () => {
    const { status, body } = await h.json("POST", "/v3/orders", {
      header: ["ordernumber", "channel", "total", "items.sku"],
      data: [["C1", "shop", "1", "Z"], ["C2", "shop", "", "Z"]],
    });
    expect(status).toBe(200);
    const results = body.results as { successful: unknown[]; failed: Record<string, { message: string; code: number }> };
    expect(results.successful).toHaveLength(1);
    expect(results.failed["1"]?.message).toContain("total");
  });

  it("length limits of part 8 fail with the validation envelope", async () => {
    const cases: Record<string, unknown>[] = [
      order("x".repeat(101)),
      order("L1", { channel: "c".repeat(51) }),
      order("L2", { discountcode: "d".repeat(51) }),
      order("L3", { currency: "EURO-DOLLAR" }),
      order("L4", { items: [{ sku: "s".repeat(101), price: "1", quantity: "1" }] }),
      order("L5", { items: [{ sku: "s", title: "t".repeat(501), price: "1", quantity: "1" }] }),
    ];
    for (const body of cases) {
      const res = await h.json("POST", "/v3/orders", body);
      expect(res.status).toBe(400);
      const failed = (res.body.results as { failed: Record<string, { message: string; code: number }> }).failed;
      expect(failed["0"]).toEqual({ message: expect.stringMatching(/limit is (100|50|10|500)/), code: expect.any(Number) });
    }
    expect((await h.json("POST", "/v3/orders", order("x".repeat(100)))).status).toBe(200);
  });

  it("only the writable status values are accepted", async () => {
    expect((await h.json("POST", "/v3/orders", order("S1", { status: "CANCELED" }))).status).toBe(400);
    expect((await h.json("POST", "/v3/orders", order("S2", { status: "READY" }))).status).toBe(200);
    expect((await h.json("POST", "/v3/orders", order("S3", { shippingstatus: "DONE" }))).status).toBe(400);
  });

  it("gets by oid and by the order string (channel + ordernumber)", async () => {
    const created = await h.json("POST", "/v3/orders", order("G1"));
    const oid = Number(created.body.oid);
    expect((await one(oid)).ordernumber).toBe("G1");
    expect((await one("shopG1")).oid).toBe(String(oid));
    expect((await h.json("GET", "/v3/orders/99999")).status).toBe(404);
  });

  it("PATCH updates (code 2, id as a string); paymentdate makes paymentstatus COMPLETE", async () => {
    const created = await h.json("POST", "/v3/orders", order("P1", { paymentstatus: "PENDING" }));
    const oid = Number(created.body.oid);
    const { status, body } = await h.json("PATCH", `/v3/orders/${oid}`, { paymentdate: "2026-01-02 10:00:00", comments: "paid" });
    expect(status).toBe(200);
    expect(body).toEqual({ id: String(oid), results: { successful: [{ code: 2, message: expect.any(String) }] } });
    expect(await one(oid)).toMatchObject({ paymentstatus: "COMPLETE", comments: "paid", ordernumber: "P1" });
    expect((await h.json("PATCH", "/v3/orders/shopP1", { gift: true })).status).toBe(200);
    expect((await one(oid)).gift).toBe("1");
  });

  it("PATCH adds shipments, but not one whose tracking number the order already has", async () => {
    const oid = Number((await h.json("POST", "/v3/orders", order("SH1"))).body.oid);
    await h.json("PATCH", `/v3/orders/${oid}`, { shipments: [{ shipcarrier: "UPS", shiptracking: "1Z1", shipdate: "NOW" }], shippingstatus: "COMPLETE" });
    const bulk = await h.json("PATCH", "/v3/orders", { header: ["oid", "shipments.shiptracking", "shipments.shipcarrier"], data: [[String(oid), "1Z1", "UPS"], [String(oid), "1Z2", "DHL"]] });
    expect(bulk.status).toBe(200);
    const o = await one(oid);
    expect(o.shipments.map((s) => s.shiptracking)).toEqual(["1Z1", "1Z2"]);
    expect(String(o.shipments[0]?.shipdate)).toMatch(/^\d{4}-\d{2}-\d{2} /);
    expect(o.shippingstatus).toBe("COMPLETE");
  });

  it("DELETE archives: code 3, the record stays with archived true", async () => {
    const oid = Number((await h.json("POST", "/v3/orders", order("D1"))).body.oid);
    const { status, body } = await h.json("DELETE", `/v3/orders/${oid}`);
    expect(status).toBe(200);
    expect(body).toEqual({ id: String(oid), results: { successful: [{ code: 3, message: expect.any(String) }] } });
    const o = await one(oid);
    expect(o.archived).toBe("1");
    const active = await orders(`?q=${encodeURIComponent("archived:=0 ordernumber:=D1")}`);
    expect(active.count).toBe("0");
    const all = await orders(`?q=${encodeURIComponent("ordernumber:=D1")}`);
    expect(all.count).toBe("1");
  });

  it("DELETE with a {header, data} body archives every order it names", async () => {
    const a = Number((await h.json("POST", "/v3/orders", order("BD1"))).body.oid);
    await h.json("POST", "/v3/orders", order("BD2"));
    const { status, body } = await h.json("DELETE", "/v3/orders", { header: ["oid", "order"], data: [[String(a), ""], ["", "shopBD2"], ["", "shopNOPE"]] });
    expect(status).toBe(200);
    const results = body.results as { successful: { code: number }[]; failed: Record<string, { message: string }> };
    expect(results.successful.map((s) => s.code)).toEqual([3, 3]);
    expect(results.failed["2"]?.message).toContain("shopNOPE");
    expect((await one(a)).archived).toBe("1");
    expect((await one("shopBD2")).archived).toBe("1");
  });

  it("filters with q, sorts with sort and sortorder, pages with page", async () => {
    const list = await orders(`?q=${encodeURIComponent("billing.city:=Berlin")}&sort=ordernumber&sortorder=asc`);
    expect(Number(list.count)).toBeGreaterThan(3);
    const numbers = list.orders.map((o) => String(o.ordernumber));
    expect(numbers).toEqual([...numbers].sort((a, b) => a.localeCompare(b, "en", { sensitivity: "base" })));
    expect((await orders("?page=99")).orders).toEqual([]);
    expect((await orders("?sort=bogus")).status).toBe(400);
    expect((await orders("?sortorder=up")).status).toBe(400);
  });

  it("unknown listing parameters: 400 naming them and listing the valid ones, code 1", async () => {
    const { status, body } = await orders("?limit=5&foo=1&page=1");
    expect(status).toBe(400);
    const failed = (body.results as { failed: Record<string, { message: string; code: number }> }).failed;
    expect(failed["0"]?.code).toBe(1);
    expect(failed["0"]?.message).toMatch(/limit, foo/);
    expect(failed["0"]?.message).toMatch(/page, sort, sortorder, q, lineitem, lineitem_filter/);
  });

  it("path shortcuts: status, shipped, paid and channel", async () => {
    const ready = await orders("/ready");
    expect(ready.orders.length).toBeGreaterThan(0);
    expect(ready.orders.every((o) => o.status === "READY")).toBe(true);
    expect((await orders("/shipped")).orders.every((o) => o.shippingstatus === "COMPLETE")).toBe(true);
    expect((await orders("/shipped")).count).toBe("1");
    expect((await orders("/paid")).orders.map((o) => o.ordernumber)).toEqual(["P1"]);
    const market = await orders("/market");
    expect(market.orders.map((o) => o.ordernumber).sort()).toEqual(["B1", "B2"]);
  });

  it("lineitem gives one entry per line; lineitem_filter drops lines that do not meet q", async () => {
    const lines = await orders(`/lineitem?q=${encodeURIComponent("ordernumber:=B1")}`);
    expect(lines.count).toBe("2");
    expect(lines.orders.map((o) => o.items.length)).toEqual([1, 1]);
    const plain = await orders(`?q=${encodeURIComponent("items.sku:=X2")}`);
    expect(plain.orders[0]?.items).toHaveLength(2);
    const filtered = await orders(`?q=${encodeURIComponent("items.sku:=X2")}&lineitem_filter=true`);
    expect(filtered.orders[0]?.items.map((i) => i.sku)).toEqual(["X2"]);
    const flag = await orders(`?q=${encodeURIComponent("ordernumber:=B1")}&lineitem=1`);
    expect(flag.count).toBe("2");
  });

  it("combine moves lines to the parent and archives the others with oidconsolidate", async () => {
    const a = Number((await h.json("POST", "/v3/orders", order("M1", { total: "10" }))).body.oid);
    const b = Number((await h.json("POST", "/v3/orders", order("M2", { total: "5" }))).body.oid);
    const { status, body } = await h.json("POST", "/v3/orders/combine", { oid: [a, b] });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: String(a), results: { successful: [{ code: 2 }] } });
    const parent = await one(a);
    expect(parent.items).toHaveLength(2);
    expect(parent.total).toBe("15");
    expect(await one(b)).toMatchObject({ archived: "1", oidconsolidate: String(a) });
    expect((await h.json("POST", "/v3/orders/combine", {})).status).toBe(400);
  });

  it("split archives the order and makes new ones whose oidconsolidate is the archived oid", async () => {
    const oid = Number((await h.json("POST", "/v3/orders", order("SP1", { items: [{ sku: "Q1", price: "2", quantity: "1" }, { sku: "Q2", price: "3", quantity: "2" }] }))).body.oid);
    const { status, body } = await h.json("POST", "/v3/orders/split", { oid });
    expect(status).toBe(200);
    const created = body.oids as number[];
    expect(created).toHaveLength(2);
    expect((await one(oid)).archived).toBe("1");
    const parts = await Promise.all(created.map((c) => one(c)));
    expect(parts.map((p) => [p.ordernumber, p.oidconsolidate, p.total])).toEqual([
      ["SP1-1", String(oid), "2"],
      ["SP1-2", String(oid), "6"],
    ]);
    expect((await h.json("POST", "/v3/orders/split", {})).status).toBe(400);
  });

  it("a second active order with the same channel and ordernumber is refused", async () => {
    const { status } = await h.json("POST", "/v3/orders", order("A1"));
    expect(status).toBe(400);
  });
});
