import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { bindFieldMap } from "../../src/mapping/index.js";
import { row, tableSource } from "./source.js";

async function headerError(promise: Promise<unknown>): Promise<ConveyorError> {
  const err: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConveyorError);
  return err as ConveyorError;
}

describe("bindFieldMap", () => {
  it("binds each service field to its column, exact name first", async () => {
    const bound = await bindFieldMap({ guid: "SKU", stock: "Qty" }, tableSource(["SKU", "Qty", "qty "]));
    expect(bound.fields).toEqual(["guid", "stock"]);
    expect(bound.getters.map((g) => g(row("A1", "5", "9")))).toEqual(["A1", "5"]);
  });

  it.each([
    ["case", "sku", ["SKU", "Price"], "A1"],
    ["surrounding spaces", " SKU ", ["SKU", "Price"], "A1"],
    ["spaces in the header", "SKU", [" sku ", "Price"], "A1"],
  ])("matches ignoring %s when there is no exact match", async (_what, name, columns, expected) => {
    const bound = await bindFieldMap({ guid: name }, tableSource(columns));
    expect(bound.getters[0]?.(row("A1", "2"))).toBe(expected);
  });

  it("fails naming every missing column and listing the available ones", async () => {
    const err = await headerError(bindFieldMap({ guid: "SKU", stock: "Quantity", price: "Cost", title: "Name" }, tableSource(["SKU", "Qty", "Price", "Name"])));
    expect(err.code).toBe("header_mismatch");
    expect(err.message).toContain('stock → "Quantity"');
    expect(err.message).toContain('price → "Cost"');
    expect(err.message).not.toContain("guid →");
    expect(err.message).toContain('Columns in the file: "SKU", "Qty", "Price", "Name"');
    expect(err.hint).toMatch(/renamed a column: update field_map/);
    expect(err.details).toMatchObject({ missing: ['stock → "Quantity"', 'price → "Cost"'], available: ["SKU", "Qty", "Price", "Name"] });
  });

  it.each([
    [";", "SKU;Qty;Price", 'delimited by ;. Set delimiter to ";" in the file config.'],
    ["tab", "SKU\tQty\tPrice", 'delimited by \\t (tab). Set delimiter to "\\t" in the file config.'],
  ])("says which delimiter a header read as one %s-holding column most likely has", async (_what, header, expected) => {
    const err = await headerError(bindFieldMap({ guid: "SKU", stock: "Qty" }, tableSource([header])));
    expect(err.hint).toContain(expected);
  });

  it("names the candidates of an ambiguous match", async () => {
    const err = await headerError(bindFieldMap({ guid: "sku" }, tableSource(["SKU", "Sku ", "Price"])));
    expect(err.code).toBe("header_mismatch");
    expect(err.message).toContain('guid → "sku" matches "SKU" and "Sku "');
    expect(err.hint).toMatch(/exactly as the file spells it/);
  });

  it("reports missing and ambiguous columns together", async () => {
    const err = await headerError(bindFieldMap({ guid: "sku", stock: "Stock" }, tableSource(["SKU", "Sku", "Qty"])));
    expect(err.message).toMatch(/does not have: stock → "Stock"/);
    expect(err.message).toMatch(/a column that matches more than one column: guid → "sku" matches "SKU" and "Sku"/);
  });

  it("an exact name wins over loose candidates", async () => {
    const bound = await bindFieldMap({ guid: "sku" }, tableSource(["SKU", "sku"]));
    expect(bound.getters[0]?.(row("upper", "lower"))).toBe("lower");
  });

  it("collects ambiguity a reader reports by throwing", async () => {
    const err = await headerError(bindFieldMap({ guid: "sku", stock: "Qty" }, tableSource(["SKU", "Sku"], { unlisted: true, throwOnAmbiguous: true })));
    expect(err.message).toContain('guid → "sku": "sku" matches SKU, Sku');
    expect(err.message).toContain('stock → "Qty"');
    expect(err.message).toContain("The format does not list its columns.");
  });

  it("shortens the list of a very wide file", async () => {
    const columns = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const err = await headerError(bindFieldMap({ guid: "missing" }, tableSource(columns)));
    expect(err.message).toContain("… and 40 more");
    expect(err.details.available).toHaveLength(100);
  });

  it("reads fixed-width offsets through the source", async () => {
    const source = tableSource([], { unlisted: true });
    const bound = await bindFieldMap({ guid: [0, 6], stock: [6, 10] }, source);
    expect(bound.getters.map((g) => g(row("A00001  12")))).toEqual(["A00001", "12"]);
    expect(source.asked).toEqual([
      [0, 6],
      [6, 10],
    ]);
  });

  it.each([[[5, 2]], [[0]], [[-1, 4]], [[0.5, 3]]])("refuses offsets %j", async (ref) => {
    const err = await headerError(bindFieldMap({ guid: ref }, tableSource([], { unlisted: true })));
    expect(err.code).toBe("definition_invalid");
    expect(err.message).toContain("field_map.guid");
  });

  it("finds other columns for templates, null when absent or ambiguous", async () => {
    const bound = await bindFieldMap({ guid: "SKU" }, tableSource(["SKU", "Brand", "model", "MODEL "]));
    expect(bound.column("brand")?.(row("A", "Acme"))).toBe("Acme");
    expect(bound.column("Colour")).toBeNull();
    expect(bound.column("Model")).toBeNull();
  });
});
