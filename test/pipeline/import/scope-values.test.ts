import { describe, expect, it } from "vitest";
import { ScopeValues } from "../../../src/pipeline/import/scope-values.js";

describe("scope values in the work database", () => {
  it("stores a record with the first record's fields as its cells, and reads each record back as it was", () => {
    const codec = new ScopeValues();
    const first = { guid: "G1", price: "1.50", stock: "" };
    const records: Array<Record<string, string>> = [
      first,
      { guid: "G2", price: "{x}", stock: "7" },
      // Other order, fewer or more fields, the separator in a value: JSON.
      { price: "2", guid: "G3", stock: "1" },
      { guid: "G4", price: "3" },
      { guid: "G5", price: "3", stock: "1", extra: "e" },
      { guid: "G6", price: "a\x1fb", stock: "1" },
      { guid: "G7", price: "\u{1F680} \ud800", stock: '"q",\n' },
    ];
    const stored = records.map((r) => codec.encode(r));
    expect(stored[0]).toBe("\x1fG1\x1f1.50\x1f");
    expect(stored[1]).toBe("\x1fG2\x1f{x}\x1f7");
    expect(stored.slice(2, 6).every((s) => s.startsWith("{"))).toBe(true);
    for (const [i, text] of stored.entries()) expect(codec.decode(text)).toEqual(records[i]);
    expect(Object.keys(codec.decode(stored[0] ?? ""))).toEqual(["guid", "price", "stock"]);
  });

  it("keeps records with a field named __proto__ as JSON", () => {
    const codec = new ScopeValues();
    const record = JSON.parse('{"guid":"G1","__proto__":"x"}') as Record<string, string>;
    const text = codec.encode(record);
    expect(text.startsWith("{")).toBe(true);
    expect(Object.keys(codec.decode(text))).toEqual(["guid", "__proto__"]);
  });

  it("keeps records of no fields as JSON", () => {
    const codec = new ScopeValues();
    const texts = [codec.encode({}), codec.encode({ guid: "G1" })];
    expect(texts).toEqual(["{}", '{"guid":"G1"}']);
    expect(texts.map((t) => codec.decode(t))).toEqual([{}, { guid: "G1" }]);
  });

  it("orders integer-like field names as JavaScript does, both ways", () => {
    const codec = new ScopeValues();
    const record: Record<string, string> = { guid: "G1", "2": "b", "1": "a" };
    const text = codec.encode(record);
    expect(text).toBe("\x1fa\x1fb\x1fG1");
    expect(codec.decode(text)).toEqual(record);
  });
});
