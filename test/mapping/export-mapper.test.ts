import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { createExportMapper, type MappingConfig } from "../../src/mapping/index.js";

describe("export mapper", () => {
  it("runs service_actions → vendor_actions → value_map → field_map → field_run", () => {
    const config: MappingConfig = {
      field_map: { guid: "Item", stock: "Quantity", price: "Price", note: "Note" },
      // service actions run first, on the service record…
      service_actions: [{ search: "stock:<1", functions: [{ name: "setValue", arg: { note: "sold out" } }] }],
      // …vendor actions see their changes…
      vendor_actions: [{ search: "note:=\"sold out\"", functions: [{ name: "setValue", arg: { stock: "none" } }, { name: "calculate", arg: { price: "round(price * 1.2, 2)" } }] }],
      // …value_map translates the result…
      value_map: { stock: { none: "0" }, "sold out": "SOLD OUT" },
      // …and field_run fills its column after field_map, reading service fields.
      field_run: { note: "{{note}}!", supplier: "ACME", label: "{{guid}}-{{billing.city}}" },
    };
    const mapper = createExportMapper(config);
    expect(mapper.columns).toEqual(["Item", "Quantity", "Price", "Note", "supplier", "label"]);
    expect(mapper.map({ guid: "A1", stock: "0", price: "10", billing: { city: "Leeds" } }, 1)).toEqual({
      ok: true,
      identifier: "A1",
      values: ["A1", "0", "12", "SOLD OUT!", "ACME", "A1-Leeds"],
    });
    expect(mapper.map({ guid: "A2", stock: "4", price: "10" }, 2)).toEqual({ ok: true, identifier: "A2", values: ["A2", "4", "10", "!", "ACME", "A2-"] });
  });

  it("lists what the export must select, condition fields included", () => {
    const mapper = createExportMapper({
      field_map: { guid: "Item", "shipping.city": "City" },
      service_actions: [{ search: "archived:=0 (status:=READY status:=PENDING)", functions: [{ name: "calculate", arg: { total: "itemtotal + shippingtotal" } }] }],
      field_run: { title: "{{brand}}" },
      identifier: "guid",
    });
    expect([...mapper.reads].sort()).toEqual(["archived", "brand", "guid", "itemtotal", "shipping.city", "shippingtotal", "status"]);
  });

  it("turns service values into text: numbers, booleans, nested objects", () => {
    const mapper = createExportMapper({ field_map: { oid: "Order", total: "Total", gift: "Gift", "billing.country": "Country", meta: "Meta", email: "Email" } }, { type: "orders" });
    expect(mapper.map({ oid: 7, total: 12.5, gift: false, billing: { country: "GB" }, meta: ["x"], email: null }, 1)).toEqual({
      ok: true,
      identifier: "7",
      values: ["7", "12.5", "0", "GB", '["x"]', ""],
    });
  });

  it("skips and errors carry the list, the rule and the record's position", () => {
    const mapper = createExportMapper({
      field_map: { guid: "Item", price: "Price" },
      vendor_actions: [{ search: "price:=", functions: [{ name: "skip", arg: true }] }, { functions: [{ name: "calculate", arg: { price: "price / 0" } }] }],
    });
    expect(mapper.map({ guid: "A1", price: "" }, 3)).toEqual({ ok: false, skipped: { actions: "vendor_actions", rule: 0, line: 3, identifier: "A1" } });
    expect(mapper.map({ guid: "A2", price: "5" }, 4)).toEqual({ ok: false, error: { line: 4, message: "vendor_actions[1].calculate: price = price / 0: division by zero", field: "price" } });
  });

  it("ignoreValue on export leaves the column empty", () => {
    const mapper = createExportMapper({ field_map: { guid: "Item", cost: "Cost" }, service_actions: [{ functions: [{ name: "ignoreValue", arg: ["cost"] }] }] });
    expect(mapper.map({ guid: "A1", cost: "3" }, 1)).toEqual({ ok: true, identifier: "A1", values: ["A1", ""] });
  });

  it("refuses offsets as export columns", () => {
    expect(() => createExportMapper({ field_map: { guid: [0, 4] } })).toThrow(ConveyorError);
  });
});
