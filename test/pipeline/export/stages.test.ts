import { describe, expect, it } from "vitest";
import { parseAutomation } from "../../../src/definition/index.js";
import { orderRows } from "../../../src/pipeline/export/orders.js";
import { outputName } from "../../../src/pipeline/export/render.js";
import { exportFields, vehicleRows } from "../../../src/pipeline/export/select.js";

/** The pure parts of an export: order flattening, vehicle rows, field selection, the file name. */
const order = {
  oid: 7,
  ordernumber: "1001",
  details: { tax: [1.5] },
  billing: { city: "Berlin" },
  items: [
    { itemid: "11", sku: "A", quantity: "1" },
    { itemid: "12", sku: "B", quantity: "2" },
  ],
  shipments: [{ shiptracking: "T1" }, { shiptracking: "T2" }],
};

describe("export stages", () => {
  it("an order per row joins its lines with *; line-item form keys each row by order and line", () => {
    const [one] = orderRows(order, false);
    expect(one?.record).toMatchObject({ oid: "7", "billing.city": "Berlin", "items.sku": "A*B", "items.quantity": "1*2", "shipments.shiptracking": "T1*T2", details: { tax: [1.5] } });
    expect(one?.key).toBe("7");
    const lines = orderRows(order, true);
    expect(lines.map((l) => [l.key, l.group, l.record["items.sku"]])).toEqual([
      ["7#11", "7", "A"],
      ["7#12", "7", "B"],
    ]);
  });

  it("vehicle rows: one per entry; a broken entry or value is a problem of that product", () => {
    const rows = [...vehicleRows({ guid: "g", fitment: '[{"year":2019,"make":"Ford"},"junk",{"year":"2020","extra":{"a":1}}]' }, "g")];
    expect(rows.map((r) => (r.kind === "row" ? [r.key, r.record["fitment.year"], r.record["fitment.make"]] : r.message))).toEqual([
      ["g#1", "2019", "Ford"],
      'fitment[1] is not a vehicle object ({"year":…, "make":…, "model":…})',
      ["g#3", "2020", undefined],
    ]);
    expect([...vehicleRows({ guid: "g", fitment: '{"year":1}' }, "g")][0]).toMatchObject({ kind: "problem", message: expect.stringContaining("JSON array") });
    expect([...vehicleRows({ guid: "g", fitment: "" }, "g")]).toEqual([]);
  });

  it("selects only the fields read; fitment asks for the fitment field itself; * asks for all", () => {
    expect(exportFields(["guid", "fitment.year", "fitment.make", "sku"], "fitment")).toEqual(["guid", "sku", "fitment"]);
    expect(exportFields(["guid", "price"], "products")).toEqual(["guid", "price"]);
    expect(exportFields(["guid", "*"], "products")).toEqual([]);
  });

  it("renders tokens in the name in the automation's time zone and refuses names outside the folder", () => {
    const parsed = parseAutomation({ name: "N", active: true, schedule: "0 * * * *", type: "products", action: "export", timezone: "America/Chicago", connection: { type: "sdsftp", path: "out" }, file_configs: [{ name: "stock-{{DATE}}-{{RUN_ID}}.csv", field_map: { sku: "sku" } }] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const a = parsed.automation;
    const fc = a.file_configs[0];
    if (!fc) throw new Error("no file config");
    expect(outputName(a, fc, 0, { runId: "r1", now: new Date("2026-03-01T03:00:00Z") })).toBe("stock-2026-02-28-r1.csv");
    expect(() => outputName(a, { ...fc, name: "/etc/passwd" }, 0, { runId: "r1", now: new Date() })).toThrow(/not a file name inside/);
  });
});
