import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { OrderGrouper, checkOrderFields, newRecord, type MappedRecord, type OrderDraft } from "../../src/mapping/index.js";

function rec(values: Record<string, string>): MappedRecord {
  return Object.assign(newRecord(), values);
}

function plain(order: OrderDraft): unknown {
  return {
    identifier: order.identifier,
    fields: { ...order.fields },
    billing: order.billing && { ...order.billing },
    shipping: order.shipping && { ...order.shipping },
    items: order.items.map((i) => ({ ...i })),
    shipments: order.shipments.map((s) => ({ fields: { ...s.fields }, shipitems: s.shipitems })),
    refunds: order.refunds.map((r) => ({ ...r })),
    lines: order.lines,
    ignored: [...order.ignored],
  };
}

describe("order grouping", () => {
  it("groups rows by identifier; each row with item fields adds a line item", () => {
    const g = new OrderGrouper();
    const rows: Array<[string, Record<string, string>]> = [
      ["1001", { order: "1001", status: "ready", email: "a@example.com", "billing.city": "Leeds", "items.sku": "A", "items.quantity": "1" }],
      ["1002", { order: "1002", "items.sku": "C", "items.quantity": "5" }],
      ["1001", { order: "1001", email: "", "billing.postalcode": "LS1", "shipping.city": "York", "items.sku": "B", "items.quantity": "2" }],
      ["1001", { order: "1001", comments: "gift wrap" }],
    ];
    rows.forEach(([id, values], i) => expect(g.add(id, rec(values), undefined, i + 2)).toBeNull());
    expect(g.size).toBe(2);
    expect(g.merged).toBe(2);
    const [first, second] = [...g.orders()].map(plain);
    expect(first).toEqual({
      identifier: "1001",
      fields: { order: "1001", status: "READY", email: "a@example.com", comments: "gift wrap" },
      billing: { city: "Leeds", postalcode: "LS1" },
      shipping: { city: "York" },
      items: [
        { sku: "A", quantity: "1" },
        { sku: "B", quantity: "2" },
      ],
      shipments: [],
      refunds: [],
      lines: [2, 4, 5],
      ignored: [],
    });
    expect(second).toMatchObject({ identifier: "1002", items: [{ sku: "C", quantity: "5" }], billing: null, lines: [3] });
  });

  it("collapses shipments with the same tracking number and gathers their items", () => {
    const g = new OrderGrouper();
    const track = (id: string, tracking: string, sku: string, extra: Record<string, string> = {}) =>
      g.add(id, rec({ oid: id, "shipments.shiptracking": tracking, "shipments.shipcarrier": "UPS", "shipments.shipdate": "now", "shipments.shipsku": sku, "shipments.shipquantity": "1", ...extra }), undefined, 0);
    track("7", "1Z999", "A");
    track("7", "1z999 ", "B", { "shipments.shipcost": "4.50" });
    track("7", "1Z999", "A", { "shipments.shipquantity": "2" });
    track("7", "1Z111", "C");
    track("8", "1Z999", "A");
    expect(g.duplicateShipments).toBe(2);
    const [seven, eight] = [...g.orders()];
    expect(seven?.shipments.map((s) => ({ fields: { ...s.fields }, shipitems: s.shipitems }))).toEqual([
      {
        fields: { shiptracking: "1Z999", shipcarrier: "UPS", shipdate: "NOW", shipcost: "4.50" },
        shipitems: [
          { sku: "A", quantity: "2" },
          { sku: "B", quantity: "1" },
        ],
      },
      { fields: { shiptracking: "1Z111", shipcarrier: "UPS", shipdate: "NOW" }, shipitems: [{ sku: "C", quantity: "1" }] },
    ]);
    expect(seven?.items).toEqual([]);
    expect(eight?.shipments).toHaveLength(1);
  });

  it("keeps shipments without a tracking number apart, and keys refunds by refundid", () => {
    const g = new OrderGrouper();
    g.add("9", rec({ "shipments.shipcarrier": "UPS" }));
    g.add("9", rec({ "shipments.shipcarrier": "DHL" }));
    g.add("9", rec({ "refunds.refundid": "R1", "refunds.refunddate": "2026-01-01" }));
    g.add("9", rec({ "refunds.refundid": "R1", "refunds.refundsku": "A" }));
    g.add("9", rec({ "refunds.refundsku": "B" }));
    const [nine] = [...g.orders()];
    expect(nine?.shipments).toHaveLength(2);
    expect(nine?.refunds.map((r) => ({ ...r }))).toEqual([{ refundid: "R1", refunddate: "2026-01-01", refundsku: "A" }, { refundsku: "B" }]);
  });

  it("keeps the fields rules ignored", () => {
    const g = new OrderGrouper();
    g.add("1", rec({ oid: "1" }), new Set(["shippingstatus"]));
    expect([...([...g.orders()][0]?.ignored ?? [])]).toEqual(["shippingstatus"]);
  });

  it.each<[Record<string, string>, string, string]>([
    [{ status: "SHIPPED" }, "status", 'status "SHIPPED" is not a status the service accepts (allowed: INCOMPLETE, READY, PENDING, ORDERED, DROPSHIPPED, COMPLETE, ARCHIVED)'],
    [{ status: "CANCELED" }, "status", 'status "CANCELED" is not a status the service accepts'],
    [{ paymentstatus: "PAID" }, "paymentstatus", "(allowed: INCOMPLETE, PENDING, COMPLETE)"],
    [{ shippingstatus: "READY" }, "shippingstatus", "(allowed: INCOMPLETE, PENDING, COMPLETE)"],
    [{ "shipments.shipdate": "soon" }, "shipments.shipdate", 'shipments.shipdate "soon" is not a date (write a date such as 2026-11-01, or NOW)'],
  ])("refuses %j naming the allowed values, and adds nothing", (values, field, message) => {
    const g = new OrderGrouper();
    const error = g.add("5", rec({ oid: "5", "items.sku": "A", ...values }), undefined, 14);
    expect(error?.line).toBe(14);
    expect(error?.field).toBe(field);
    expect(error?.message).toContain(message);
    expect(g.size).toBe(0);
  });

  it.each([
    [{ status: " complete " }, "status", "COMPLETE"],
    [{ paymentstatus: "Pending" }, "paymentstatus", "PENDING"],
    [{ shippingstatus: "COMPLETE" }, "shippingstatus", "COMPLETE"],
    [{ status: "" }, "status", undefined],
  ])("accepts %j", (values, field, expected) => {
    const g = new OrderGrouper();
    expect(g.add("5", rec(values))).toBeNull();
    expect([...g.orders()][0]?.fields[field]).toBe(expected);
  });

  it.each(["NOW", "now", "2026-11-01", "2026-11-01 08:00:00"])("accepts shipdate %s", (shipdate) => {
    expect(new OrderGrouper().add("5", rec({ "shipments.shipdate": shipdate, "shipments.shiptracking": "T" }))).toBeNull();
  });
});

describe("checkOrderFields", () => {
  it("accepts order fields and the seed's part fields", () => {
    expect(() => checkOrderFields(["oid", "status", "billing.firstname", "shipping.street1", "items.sku", "items.custom_colour", "shipments.shiptracking", "refunds.refundid"])).not.toThrow();
  });

  it("names every unknown part field with what is allowed", () => {
    let err: unknown;
    try {
      checkOrderFields(["billing.town", "shipments.tracking", "customer.name", "items.anything"]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConveyorError);
    const message = (err as ConveyorError).message;
    expect(message).toContain('"billing.town": billing has no field "town" (allowed: country, firstname');
    expect(message).toContain('"shipments.tracking": shipments has no field "tracking"');
    expect(message).toContain('"customer.name": "customer." is not a part of an order');
    expect(message).not.toContain("items.anything");
  });
});
