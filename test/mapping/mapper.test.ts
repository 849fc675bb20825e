import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { createImportMapper, mappedFields, type MapResult, type MappingConfig } from "../../src/mapping/index.js";
import { row, tableSource, type TestRow } from "./source.js";

const columns = ["SKU", "Qty", "Cost", "Brand", "Model", "Avail"];

async function mapOne(config: MappingConfig, cells: string[], line = 2): Promise<MapResult> {
  const mapper = await createImportMapper<TestRow>(config, tableSource(columns));
  return mapper.map(row(...cells), line);
}

function ok(result: MapResult): Record<string, string> {
  if (!result.ok) throw new Error(`expected a record, got ${JSON.stringify(result)}`);
  return { ...result.record };
}

describe("import mapper", () => {
  it("knows every field a record may carry from the definition alone, in the mapper's order", async () => {
    const config: MappingConfig = {
      identifier: "guid",
      field_map: { guid: "SKU", stock: "Avail" },
      field_run: { title: "{{Brand}} {{Model}}", stock: "{{stock}}" },
      value_map_default: { shipcarrier: "UPS", guid: "none" },
      vendor_actions: [{ functions: [{ name: "calculate", arg: { price: "stock * 2" } }] }],
      service_actions: [{ functions: [{ name: "calculate", arg: { cost: "price / 2" } }] }],
    };
    // The scope is asked for with these before any file is read; the mapper bound to the file must carry the same.
    expect(mappedFields(config)).toEqual(["guid", "stock", "title", "shipcarrier", "price", "cost"]);
    const mapper = await createImportMapper<TestRow>(config, tableSource(columns));
    expect(mapper.fields).toEqual(mappedFields(config));
  });

  it("runs field_map → field_run → value_map → value_map_default → vendor_actions in that order", async () => {
    const config: MappingConfig = {
      identifier: "guid",
      field_map: { guid: "SKU", stock: "Avail", cost: "Cost" },
      // field_run sees the mapped value before value_map translates it…
      field_run: { note: "was {{stock}}", title: "{{Brand}} {{Model}}", condition: "New" },
      // …value_map then translates field_run's output as well…
      value_map: { Available: "10", stock: { Available: "25" }, New: "NEW" },
      // …defaults fill what is still empty after translation…
      value_map_default: { stock: "0", shipcarrier: "UPS" },
      // …and actions see the translated and defaulted values.
      vendor_actions: [{ functions: [{ name: "calculate", arg: { price: "cost * 2 + stock" } }] }],
    };
    const mapper = await createImportMapper<TestRow>(config, tableSource(columns));
    expect(ok(mapper.map(row("A1", "", "4", "Acme", "X1", "Available"), 2))).toEqual({
      guid: "A1",
      stock: "25",
      cost: "4",
      note: "was Available",
      title: "Acme X1",
      condition: "NEW",
      shipcarrier: "UPS",
      price: "33",
    });
    expect(ok(mapper.map(row("A2", "", "4", "Acme", "X1", " "), 3))).toMatchObject({ stock: "0", price: "8" });
    expect(mapper.fields).toEqual(["guid", "stock", "cost", "note", "title", "condition", "shipcarrier", "price"]);
  });

  it("returns the trimmed identifier, the line and the ignored set", async () => {
    const result = await mapOne({ field_map: { guid: "SKU", stock: "Qty" }, vendor_actions: [{ functions: [{ name: "ignoreValue", arg: ["stock"] }] }] }, [" A1 ", "5"], 7);
    expect(result).toMatchObject({ ok: true, line: 7, identifier: "A1" });
    if (result.ok) expect([...result.ignored]).toEqual(["stock"]);
  });

  it.each<[string, MappingConfig, string[], { line: number; message: string; field?: string; identifier?: string }]>([
    ["an empty identifier", { field_map: { guid: "SKU", stock: "Qty" } }, ["  ", "5"], { line: 9, message: 'the identifier "guid" is empty', field: "guid" }],
    ["a missing identifier cell", { field_map: { guid: "SKU" } }, [], { line: 9, message: 'the identifier "guid" is missing', field: "guid" }],
    [
      "an action error",
      { field_map: { guid: "SKU", cost: "Cost" }, vendor_actions: [{ functions: [{ name: "calculate", arg: { price: "cost * 1.2" } }] }] },
      ["A1", "1", "n/a"],
      // Mapped before the action failed: the record is still in the feed.
      { line: 9, message: 'vendor_actions[0].calculate: price = cost * 1.2: field "cost" is "n/a", not a number', field: "cost", identifier: "A1" },
    ],
    ["an orders identifier by default", { field_map: { oid: "SKU" } }, [""], { line: 9, message: 'the identifier "oid" is empty', field: "oid" }],
  ])("%s is a row error with its line", async (_what, config, cells, error) => {
    const mapper = await createImportMapper<TestRow>(config, tableSource(columns), { type: config.field_map.oid ? "orders" : "products" });
    expect(mapper.map(row(...cells), 9)).toEqual({ ok: false, error });
  });

  it("a bad row does not stop the good ones", async () => {
    const mapper = await createImportMapper<TestRow>({ field_map: { guid: "SKU", cost: "Cost" }, vendor_actions: [{ functions: [{ name: "calculate", arg: { price: "cost * 2" } }] }] }, tableSource(columns));
    const results = [row("A", "", "1"), row("B", "", "x"), row("", "", "3"), row("D", "", "4")].map((r, i) => mapper.map(r, i + 2));
    expect(results.map((r) => (r.ok ? r.identifier : "error" in r ? `line ${r.error.line}` : "skipped"))).toEqual(["A", "line 3", "line 4", "D"]);
  });

  it("a parse problem of the row and the reader's width check are row errors", async () => {
    const mapper = await createImportMapper<TestRow>({ field_map: { guid: "SKU" } }, tableSource(columns), {
      rowProblem: (r, cols) => (cols && r.cells.length !== cols.length ? `line has ${r.cells.length} fields, the header has ${cols.length}` : null),
    });
    // Each still names the record its identifier cell reads, so that `remove` leaves that record alone.
    expect(mapper.map({ cells: ["A"], error: "unterminated quote" }, 4)).toEqual({ ok: false, error: { line: 4, message: "unterminated quote", identifier: "A" } });
    expect(mapper.map(row("A", "1"), 5)).toEqual({ ok: false, error: { line: 5, message: "line has 2 fields, the header has 6", identifier: "A" } });
    expect(mapper.map({ cells: [], error: "unterminated quote" }, 7)).toEqual({ ok: false, error: { line: 7, message: "unterminated quote" } });
    expect(mapper.map(row("A", "1", "2", "3", "4", "5"), 6)).toMatchObject({ ok: true, identifier: "A" });
  });

  it("skip reports the rule index, the line and the identifier", async () => {
    const result = await mapOne(
      { field_map: { guid: "SKU", stock: "Qty" }, vendor_actions: [{ functions: [{ name: "trim", arg: ["guid"] }] }, { search: "stock:<1", functions: [{ name: "skip", arg: true }] }] },
      ["A1 ", "0"],
      12,
    );
    expect(result).toEqual({ ok: false, skipped: { actions: "vendor_actions", rule: 1, line: 12, identifier: "A1" } });
  });

  it("fails at bind time when the identifier is never set", async () => {
    await expect(createImportMapper<TestRow>({ identifier: "sku", field_map: { guid: "SKU" } }, tableSource(columns))).rejects.toThrow(/identifier: "sku" is not set/);
  });

  it("an identifier set by an action is accepted", async () => {
    const result = await mapOne({ identifier: "sku", field_map: { guid: "SKU" }, vendor_actions: [{ functions: [{ name: "remapField", arg: { sku: "guid" } }] }] }, ["A1"]);
    expect(result).toMatchObject({ ok: true, identifier: "A1" });
  });

  it("fails the header check before any row", async () => {
    const err = await createImportMapper<TestRow>({ field_map: { guid: "SKU", stock: "Quantity" } }, tableSource(columns)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).code).toBe("header_mismatch");
  });

  it("templates name a mapped field first, then a source column", async () => {
    const result = await mapOne({ field_map: { guid: "SKU", Brand: "Model" }, field_run: { a: "{{Brand}}", b: "{{Cost}}", c: "{{a}}/{{Qty}}" } }, ["A1", "5", "9", "Acme", "X1", ""]);
    expect(ok(result)).toMatchObject({ Brand: "X1", a: "X1", b: "9", c: "X1/5" });
  });

  it("an unknown template name is a definition error", async () => {
    await expect(createImportMapper<TestRow>({ field_map: { guid: "SKU" }, field_run: { title: "{{Colour}}" } }, tableSource(columns))).rejects.toThrow(/field_run.title: \{\{Colour\}\}/);
  });

  it("checks order fields of an orders mapping at bind time", async () => {
    await expect(createImportMapper<TestRow>({ field_map: { oid: "SKU", "shipments.tracking": "Qty" } }, tableSource(columns), { type: "orders" })).rejects.toThrow(/shipments has no field "tracking"/);
    const mapper = await createImportMapper<TestRow>({ field_map: { oid: "SKU", "shipments.shiptracking": "Qty" }, field_run: { "shipments.shipdate": "NOW" } }, tableSource(columns), { type: "orders" });
    expect(mapper.map(row("1001", "1Z9"), 2)).toMatchObject({ ok: true, identifier: "1001", record: { "shipments.shiptracking": "1Z9", "shipments.shipdate": "NOW" } });
  });

  it("fields named like Object.prototype members are plain fields", async () => {
    const result = await mapOne({ field_map: { guid: "SKU", constructor: "Qty" }, value_map_default: { toString: "x" } }, ["A1", "5"]);
    expect(ok(result)).toEqual({ guid: "A1", constructor: "5", toString: "x" });
  });
});

describe("service actions on import", () => {
  const config: MappingConfig = {
    field_map: { guid: "SKU", stock: "Qty", price: "Cost" },
    service_actions: [
      { search: "price:>0", functions: [{ name: "ignoreValue", arg: ["price"] }] },
      { search: "status:=locked", functions: [{ name: "skip", arg: true }] },
      { functions: [{ name: "calculate", arg: { stock: "max(stock - 1, 0)" } }] },
    ],
  };

  it("tests conditions on the service's record and leaves the input alone", async () => {
    const mapper = await createImportMapper<TestRow>(config, tableSource(columns));
    const mapped = mapper.map(row("A1", "5", "9"), 2);
    if (!mapped.ok) throw new Error("mapping failed");
    const held = mapper.applyServiceActions(mapped.record, mapped.ignored, { guid: "A1", price: "12" });
    expect(held).toMatchObject({ ok: true, record: { guid: "A1", stock: "4" } });
    if (held.ok) expect([...held.ignored]).toEqual(["price"]);
    expect({ ...mapped.record }).toEqual({ guid: "A1", stock: "5", price: "9" });
    // A create: the service holds nothing, so `price:>0` is false and the price is sent.
    expect(mapper.applyServiceActions(mapped.record, mapped.ignored, undefined)).toMatchObject({ ok: true, record: { price: "9", stock: "4" } });
    expect(mapper.applyServiceActions(mapped.record, mapped.ignored, { status: "LOCKED" })).toEqual({ ok: false, skipped: { actions: "service_actions", rule: 1 } });
  });

  it("errors are results, not exceptions", async () => {
    const mapper = await createImportMapper<TestRow>(config, tableSource(columns));
    const mapped = mapper.map(row("A1", "many", "9"), 2);
    if (!mapped.ok) throw new Error("mapping failed");
    expect(mapper.applyServiceActions(mapped.record, mapped.ignored, {})).toEqual({
      ok: false,
      error: { message: 'service_actions[2].calculate: stock = max(stock - 1, 0): field "stock" is "many", not a number', field: "stock" },
    });
  });

  it("returns the record unchanged when there are no service actions", async () => {
    const mapper = await createImportMapper<TestRow>({ field_map: { guid: "SKU" } }, tableSource(columns));
    const mapped = mapper.map(row("A1"), 2);
    if (!mapped.ok) throw new Error("mapping failed");
    expect(mapper.hasServiceActions).toBe(false);
    expect(mapper.applyServiceActions(mapped.record, mapped.ignored, undefined)).toMatchObject({ ok: true, record: mapped.record });
  });
});
