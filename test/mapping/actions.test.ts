import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { RowFailure, actionWrites, compileActions, newRecord, type ActionRuleConfig, type MappedRecord } from "../../src/mapping/index.js";
import type { ActionState } from "../../src/mapping/action-functions.js";
import type { NameResolver } from "../../src/mapping/template.js";

type Row = Record<string, string>;
const resolve: NameResolver<Row> = (name) => (name.startsWith("col_") ? (_r, row) => row?.[name] : (r) => r[name]);

function run(rules: ActionRuleConfig[], values: Record<string, string>, row?: Row): { record: Record<string, string>; ignored: string[]; skipped: number } {
  const actions = compileActions(rules, { key: "vendor_actions", on: "record", resolve });
  const state: ActionState = { record: Object.assign(newRecord(), values), ignored: null };
  const skipped = actions.apply(state, row);
  return { record: { ...state.record }, ignored: [...(state.ignored ?? [])], skipped };
}

const fn = (name: string, arg: unknown): ActionRuleConfig => ({ functions: [{ name, arg }] });

describe("action functions", () => {
  it.each<[string, ActionRuleConfig, Record<string, string>, Record<string, string>]>([
    ["setValue constant", fn("setValue", { condition: "New", stock: 0 }), { sku: "A" }, { sku: "A", condition: "New", stock: "0" }],
    ["setValue template", fn("setValue", { title: "{{brand}} {{model}}", mpn: "{{col_mpn}}" }), { brand: "Acme", model: "X1" }, { brand: "Acme", model: "X1", title: "Acme X1", mpn: "M-9" }],
    ["remapField copies", fn("remapField", { mpn: "sku", upc: "col_upc" }), { sku: "A1", mpn: "old" }, { sku: "A1", mpn: "A1", upc: "0123" }],
    ["remapField from a missing field leaves the target alone", fn("remapField", { mpn: "nothing" }), { mpn: "keep" }, { mpn: "keep" }],
    ["calculate", fn("calculate", { price: "round(cost * 1.35 + 2, 2)", msrp: "price * 2" }), { cost: "10" }, { cost: "10", price: "15.5", msrp: "31" }],
    ["replace literal, every occurrence", fn("replace", { title: ["-", " "] }), { title: "a-b-c" }, { title: "a b c" }],
    ["replace literal keeps $ as text", fn("replace", { title: ["USD", "$1"] }), { title: "5 USD" }, { title: "5 $1" }],
    ["replace regex, every match", fn("replace", { title: ["/\\s+/", " "] }), { title: "a   b \t c" }, { title: "a b c" }],
    ["replace regex with flags and groups", fn("replace", { sku: ["/^acme-(\\d+)$/i", "A$1"] }), { sku: "ACME-42" }, { sku: "A42" }],
    ["replace on a missing field creates nothing", fn("replace", { title: ["a", "b"] }), {}, {}],
    ["prefix", fn("prefix", { sku: "ACME-" }), { sku: "42" }, { sku: "ACME-42" }],
    ["suffix", fn("suffix", { title: " (new)", missing: "x" }), { title: "Hat" }, { title: "Hat (new)" }],
    ["trim", fn("trim", ["title", "sku"]), { title: "  Hat ", sku: "\tA " }, { title: "Hat", sku: "A" }],
    ["trim a single field name", fn("trim", "title"), { title: " Hat " }, { title: "Hat" }],
    ["uppercase", fn("uppercase", ["sku"]), { sku: "ab-1", title: "x" }, { sku: "AB-1", title: "x" }],
    ["lowercase", fn("lowercase", ["brand"]), { brand: "ACME" }, { brand: "acme" }],
    ["truncate", fn("truncate", { title: 5, sku: "3" }), { title: "Long title", sku: "AB" }, { title: "Long ", sku: "AB" }],
    ["truncate never splits a surrogate pair", fn("truncate", { title: 3 }), { title: "ab😀c" }, { title: "ab" }],
    ["ignoreField alias", fn("ignoreField", ["stock"]), { stock: "5", sku: "A" }, { sku: "A" }],
    ["skip false does nothing", fn("skip", false), { sku: "A" }, { sku: "A" }],
  ])("%s", (_what, rule, input, expected) => {
    const result = run([rule], input, { col_mpn: "M-9", col_upc: "0123" });
    expect(result.record).toEqual(expected);
    expect(result.skipped).toBe(-1);
  });

  it("ignoreValue drops the fields and remembers them for the planner", () => {
    const result = run([fn("ignoreValue", ["stock", "price"])], { sku: "A", stock: "5", price: "9" });
    expect(result.record).toEqual({ sku: "A" });
    expect(result.ignored).toEqual(["stock", "price"]);
  });

  it("a later write takes a field off the ignored set", () => {
    const result = run([fn("ignoreValue", ["stock", "price"]), fn("setValue", { stock: "0" })], { stock: "5", price: "1" });
    expect(result.record).toEqual({ stock: "0" });
    expect(result.ignored).toEqual(["price"]);
  });

  it("skip drops the record and reports the rule's index", () => {
    const rules = [fn("setValue", { a: "1" }), { search: "stock:=0", functions: [{ name: "skip", arg: true }] }, fn("setValue", { b: "2" })];
    expect(run(rules, { stock: "0" }).skipped).toBe(1);
    expect(run(rules, { stock: "4" })).toEqual({ record: { stock: "4", a: "1", b: "2" }, ignored: [], skipped: -1 });
  });
});

describe("rule order and conditions", () => {
  it("runs rules top to bottom, functions in written order, later rules seeing earlier changes", () => {
    const rules: ActionRuleConfig[] = [
      { functions: [{ name: "setValue", arg: { title: "{{brand}}" } }, { name: "uppercase", arg: ["title"] }, { name: "suffix", arg: { title: "!" } }] },
      { search: "title:=ACME!", functions: [{ name: "setValue", arg: { matched: "yes" } }] },
      { search: "matched:=yes", functions: [{ name: "calculate", arg: { price: "cost * 2" } }] },
    ];
    expect(run(rules, { brand: "acme", cost: "4" }).record).toEqual({ brand: "acme", cost: "4", title: "ACME!", matched: "yes", price: "8" });
    expect(run(rules, { brand: "other", cost: "4" }).record).toEqual({ brand: "other", cost: "4", title: "OTHER!" });
  });

  it.each([
    ["stock:>0", { stock: "5" }, true],
    ["stock:>0", { stock: "0" }, false],
    ["stock:>0", {}, false],
    ["(brand:=Nike brand:=Adidas) condition:=New", { brand: "adidas", condition: "New" }, true],
    ["(brand:=Nike brand:=Adidas) condition:=New", { brand: "Puma", condition: "New" }, false],
    ['vendorstock:="Out of Stock"', { vendorstock: "out of stock" }, true],
    ["title:=", { title: "" }, true],
    ["sku:-=", { sku: "A" }, true],
  ])("condition %s on %j applies: %s", (search, values, applies) => {
    const result = run([{ search, functions: [{ name: "setValue", arg: { hit: "1" } }] }], values);
    expect(result.record.hit === "1").toBe(applies);
  });

  it("service conditions read the given record, an absent one as empty", () => {
    const actions = compileActions([{ search: "price:>0", functions: [{ name: "ignoreValue", arg: ["price"] }] }], { key: "service_actions", on: "given", resolve });
    const held: ActionState = { record: Object.assign(newRecord(), { price: "0" }), ignored: null };
    actions.apply(held, undefined, { price: "12" });
    expect({ ...held.record }).toEqual({});
    const fresh: ActionState = { record: Object.assign(newRecord(), { price: "9" }), ignored: null };
    actions.apply(fresh, undefined, undefined);
    expect({ ...fresh.record }).toEqual({ price: "9" });
  });

  it("relative dates in conditions use the given clock", () => {
    const now = () => new Date("2026-11-02T00:00:00Z");
    const actions = compileActions([{ search: 'dateupdated:>"-1 day"', functions: [{ name: "setValue", arg: { recent: "1" } }] }], { key: "vendor_actions", on: "record", resolve, now });
    const state: ActionState = { record: Object.assign(newRecord(), { dateupdated: "2026-11-01 12:00:00" }), ignored: null };
    actions.apply(state, undefined);
    expect(state.record.recent).toBe("1");
    expect(actions.conditionFields).toEqual(["dateupdated"]);
  });
});

describe("rule errors", () => {
  it("a failing function is a RowFailure naming the rule, the function and the field", () => {
    const actions = compileActions([fn("setValue", { a: "1" }), fn("calculate", { price: "cost * 2" })], { key: "vendor_actions", on: "record", resolve });
    const state: ActionState = { record: Object.assign(newRecord(), { cost: "n/a" }) as MappedRecord, ignored: null };
    let err: unknown;
    try {
      actions.apply(state, undefined);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RowFailure);
    expect((err as RowFailure).message).toBe('vendor_actions[1].calculate: price = cost * 2: field "cost" is "n/a", not a number');
    expect((err as RowFailure).field).toBe("cost");
  });

  it.each<[string, ActionRuleConfig[], string, string]>([
    ["unknown function", [fn("explode", true)], "definition_invalid", 'vendor_actions[0].explode: unknown function "explode"'],
    ["a rule without functions", [{ functions: [] }], "definition_invalid", "vendor_actions[0]: the rule has no function"],
    ["bad search", [{ search: "(stock:>0", functions: [{ name: "skip", arg: true }] }], "search_syntax", "vendor_actions[0].search: "],
    ["bad regex", [fn("replace", { title: ["/(/", ""] })], "definition_invalid", 'vendor_actions[0].replace.title: "/(/" is not a valid regular expression'],
    ["replace without a pair", [fn("replace", { title: "x" })], "definition_invalid", "vendor_actions[0].replace.title: expects [pattern, replacement]"],
    ["truncate to zero", [fn("truncate", { title: 0 })], "definition_invalid", "vendor_actions[0].truncate.title: expects a whole number"],
    ["setValue with a list", [fn("setValue", ["a"])], "definition_invalid", "vendor_actions[0].setValue: expects an object"],
    ["trim of nothing", [fn("trim", [])], "definition_invalid", "vendor_actions[0].trim: expects a field name or an array"],
    ["skip with text", [fn("skip", "maybe")], "definition_invalid", "vendor_actions[0].skip: expects true"],
    ["calculate syntax", [fn("calculate", { price: "cost *" })], "definition_invalid", "vendor_actions[0].calculate.price: expected a number"],
  ])("%s is a definition error", (_what, rules, code, message) => {
    let err: unknown;
    try {
      compileActions(rules, { key: "vendor_actions", on: "record", resolve });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).code).toBe(code);
    expect((err as ConveyorError).message).toContain(message);
  });

  it("lists the known functions for an unknown one", () => {
    expect(() => compileActions([fn("explode", true)], { key: "vendor_actions", on: "record", resolve })).toThrow(ConveyorError);
    try {
      compileActions([fn("explode", true)], { key: "vendor_actions", on: "record", resolve });
    } catch (e) {
      expect((e as ConveyorError).hint).toContain("setValue, ignoreValue, remapField, calculate, replace, prefix, suffix, trim, uppercase, lowercase, truncate, skip");
    }
  });

  it("actionWrites lists the fields rules create", () => {
    expect(actionWrites([fn("setValue", { a: "1" }), fn("calculate", { b: "1" }), fn("remapField", { c: "a" }), fn("trim", ["d"])])).toEqual(["a", "b", "c"]);
  });
});
