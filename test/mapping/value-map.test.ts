import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { compileValueDefaults, compileValueMap, newRecord, type MappedRecord } from "../../src/mapping/index.js";

function record(values: Record<string, string>): MappedRecord {
  return Object.assign(newRecord(), values);
}

const config = {
  Available: 10,
  "Out of stock": 0,
  Yes: "1",
  stock: { Available: 25, Low: "3" },
  condition: { N: "New", U: "Used" },
  brand: { Generic: null },
};

describe("value_map", () => {
  const map = compileValueMap(config);
  it.each<[string, Record<string, string>, Record<string, string>]>([
    ["a global entry applies in every field", { availability: "Available", note: "Yes" }, { availability: "10", note: "1" }],
    ["a per-field entry wins over the global one", { stock: "Available", other: "Available" }, { stock: "25", other: "10" }],
    ["a field's own map falls back to the global entries", { stock: "Out of stock" }, { stock: "0" }],
    ["matching is exact after trimming", { stock: "  Low ", condition: "n" }, { stock: "3", condition: "n" }],
    ["values without a match pass through untouched", { title: "  Available now ", stock: "7" }, { title: "  Available now ", stock: "7" }],
    ["null maps to empty text", { brand: "Generic" }, { brand: "" }],
    ["fields not in the record are not created", {}, {}],
  ])("%s", (_what, input, expected) => {
    const r = record(input);
    map.apply(r);
    expect({ ...r }).toEqual(expected);
  });

  it("with only per-field maps, other fields are not touched", () => {
    const only = compileValueMap({ stock: { Available: "10" } });
    const r = record({ stock: "Available", title: "Available" });
    only.apply(r);
    expect({ ...r }).toEqual({ stock: "10", title: "Available" });
  });

  it("is empty without entries", () => {
    expect(compileValueMap(undefined).empty).toBe(true);
    expect(compileValueMap({}).empty).toBe(true);
  });

  it("refuses a replacement that is not a scalar", () => {
    expect(() => compileValueMap({ stock: { Available: [1] } })).toThrow(ConveyorError);
    expect(() => compileValueMap({ stock: { Available: [1] } })).toThrow(/value_map\.stock\.Available/);
  });
});

describe("value_map_default", () => {
  const defaults = compileValueDefaults({ shipcarrier: "UPS", stock: 0, active: true });
  it.each<[string, Record<string, string>, Record<string, string>]>([
    ["fills missing fields", {}, { shipcarrier: "UPS", stock: "0", active: "1" }],
    ["fills blank fields", { shipcarrier: "  ", stock: "" }, { shipcarrier: "UPS", stock: "0", active: "1" }],
    ["keeps values", { shipcarrier: "DHL", stock: "4", active: "0" }, { shipcarrier: "DHL", stock: "4", active: "0" }],
  ])("%s", (_what, input, expected) => {
    const r = record(input);
    defaults.apply(r);
    expect({ ...r }).toEqual(expected);
  });

  it("refuses an object default", () => {
    expect(() => compileValueDefaults({ shipcarrier: { a: 1 } })).toThrow(/value_map_default\.shipcarrier/);
  });
});
