import { describe, expect, it } from "vitest";
import { definitionWarnings } from "../../src/definition/index.js";
import { fc, orderExport, parsed, problemsOf, productImport, type Def } from "./helpers.js";

/** `file_configs[].change_limits`: its shape, its defaults, and what `conveyor check` says of a wrong one. */

function limits(value: unknown): Def {
  const d = productImport();
  fc(d).change_limits = value;
  fc(d).field_map = { sku: "Item Number", stock: "Qty", price: "Price", cost: "Cost" };
  return d;
}

const STOCK = { zeroed: { kind: "share", value: 0.5 } };
const PRICE = { zeroed: { kind: "share", value: 0.05 }, moved: { percent: 30, share: { kind: "share", value: 0.1 } } };

describe("change_limits defaults and overrides", () => {
  it("a product import names none: stock and price get the defaults", () => {
    expect(parsed(productImport()).file_configs[0]?.change_limits).toEqual({ stock: STOCK, price: PRICE });
  });
  it("an export and a bulk-file import have none", () => {
    expect(parsed(orderExport()).file_configs[0]?.change_limits).toBeUndefined();
    const d = productImport();
    d.file_configs = [{ name: "bulk.*", field_map: {}, bulk_file: 1 }];
    expect(parsed(d).file_configs[0]?.change_limits).toBeUndefined();
  });
  it.each<[string, unknown, unknown]>([
    ["false turns every limit off", false, {}],
    ["null too", null, {}],
    ["a field's false turns its defaults off", { stock: false }, { price: PRICE }],
    ["a key given replaces the default's, the others stay", { price: { moved: "50%" } }, { stock: STOCK, price: { ...PRICE, moved: { percent: 50, share: { kind: "share", value: 0.1 } } } }],
    ["a key set to null or false is off", { price: { zeroed: null, moved: false } }, { stock: STOCK }],
    ["a count as well as a share", { stock: { zeroed: 500 } }, { stock: { zeroed: { kind: "count", value: 500 } }, price: PRICE }],
    ["moved alone on another field takes a share of 10%", { cost: { moved: "12.5%" } }, { stock: STOCK, price: PRICE, cost: { moved: { percent: 12.5, share: { kind: "share", value: 0.1 } } } }],
    ["the issue's example", { stock: { zeroed: "20%" }, price: { moved: "30%", share: "5%" } }, { stock: { zeroed: { kind: "share", value: 0.2 } }, price: { ...PRICE, moved: { percent: 30, share: { kind: "share", value: 0.05 } } } }],
  ])("%s", (_label, value, expected) => {
    expect(parsed(limits(value)).file_configs[0]?.change_limits).toEqual(expected);
  });
});

describe("change_limits problems name the field path and what is allowed", () => {
  it.each<[string, unknown, string, RegExp, RegExp]>([
    ["not an object", "20%", "file_configs[0].change_limits", /"20%" is not a set of change limits/, /field → \{zeroed, moved, share\}/],
    ["a field that is not an object", { stock: "20%" }, "file_configs[0].change_limits.stock", /is not a field's change limits/, /false or null turns/],
    ["zeroed over 100%", { stock: { zeroed: "120%" } }, "file_configs[0].change_limits.stock.zeroed", /"120%" is not a limit/, /0–100%/],
    ["moved as a number", { price: { moved: 30 } }, "file_configs[0].change_limits.price.moved", /30 is not a percentage/, /"30%"/],
    ["moved of 0%", { price: { moved: "0%" } }, "file_configs[0].change_limits.price.moved", /is not a percentage/, /above 0/],
    ["share negative", { price: { share: -1 } }, "file_configs[0].change_limits.price.share", /-1 is not a limit/, /whole number/],
    ["an unknown key", { stock: { zero: "5%" } }, "file_configs[0].change_limits.stock.zero", /unknown key "zero"/, /zeroed, moved, share/],
    ["share without moved", { cost: { share: "5%" } }, "file_configs[0].change_limits.cost.share", /has no moved/, /moved beside share/],
    ["the identifier", { sku: { zeroed: "5%" } }, "file_configs[0].change_limits.sku", /is the identifier/, /other than the identifier/],
  ])("%s", (_label, value, path, message, allowed) => {
    const problems = problemsOf(limits(value));
    expect(problems, JSON.stringify(problems, null, 1)).toHaveLength(1);
    expect(problems[0]?.path).toBe(path);
    expect(problems[0]?.message).toMatch(message);
    expect(problems[0]?.allowed).toMatch(allowed);
  });

  it("an order import refuses change_limits and says why", () => {
    const d: Def = { name: "Tracking", active: true, schedule: "0 * * * *", type: "orders", action: "import", connection: { type: "sds3", path: "t" }, file_configs: [{ field_map: { oid: "Order" }, update: true, change_limits: { stock: false } }] };
    const problems = problemsOf(d);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ path: "file_configs[0].change_limits", allowed: "change_limits in a products import" });
    expect(problems[0]?.message).toMatch(/applies to product imports/);
  });
  it("an export refuses it as an import-only key", () => {
    const d = orderExport();
    fc(d).change_limits = false;
    expect(problemsOf(d).map((p) => [p.path, p.message])).toEqual([["file_configs[0].change_limits", '"change_limits" applies to imports only']]);
  });
  it("a bulk file refuses it: nothing is planned field by field", () => {
    const d = productImport();
    d.file_configs = [{ name: "bulk.*", field_map: {}, bulk_file: 1, change_limits: { stock: false } }];
    expect(problemsOf(d).map((p) => p.path)).toEqual(["file_configs[0].change_limits"]);
  });
  it("a limit on a field the file config never sets is a warning naming the mapped fields", () => {
    const warnings = definitionWarnings(parsed(limits({ weight: { moved: "50%" } })));
    expect(warnings).toEqual([{ path: "file_configs[0].change_limits.weight", message: '"weight" is not set by this file config, so its limits never apply', allowed: "a field the file config maps: stock, price, cost" }]);
    expect(definitionWarnings(parsed(limits({ cost: { moved: "50%" } })))).toEqual([]);
  });
});
