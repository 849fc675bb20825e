import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../src/definition/types.js";
import { ConveyorError } from "../../src/errors.js";
import { widthProblem } from "../../src/formats/csv-reader.js";
import { eachRow } from "../../src/formats/batches.js";
import { openReader } from "../../src/formats/open-reader.js";
import type { RecordReader, SourceRow } from "../../src/formats/types.js";
import { createImportMapper, type FieldSource, type MapResult, type MappingConfig } from "../../src/mapping/index.js";

// The definition's FileConfig and the formats' RecordReader must satisfy mapping's interfaces as they are.
const configFits = (config: FileConfig): MappingConfig => config;
const readerFits = (reader: RecordReader): FieldSource<SourceRow> => reader;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "conveyor-mapping-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function mapFile(name: string, content: string, config: MappingConfig, options: Parameters<typeof openReader>[1] = {}): Promise<MapResult[]> {
  const path = join(dir, name);
  await writeFile(path, content);
  const reader = readerFits(await openReader(path, options)) as RecordReader;
  try {
    const mapper = await createImportMapper<SourceRow>(config, reader, { rowProblem: (row, columns) => widthProblem(columns, row) });
    const out: MapResult[] = [];
    for await (const row of eachRow(reader)) out.push(mapper.map(row, row.line));
    return out;
  } finally {
    await reader.close();
  }
}

describe("mapping over the real readers", () => {
  it("keeps the type contracts", () => {
    expect(typeof configFits).toBe("function");
  });

  it("maps a CSV feed, with row errors at their physical lines", async () => {
    const csv = "SKU,Qty,Cost\nA1,5,10\n,3,4\nA3,x,2\nA4,1\n0700,2,1.5\n";
    const results = await mapFile("feed.csv", csv, {
      field_map: { guid: "sku", stock: "QTY ", cost: "Cost" },
      vendor_actions: [{ functions: [{ name: "calculate", arg: { price: "round(cost * 1.35 + 2, 2)", stock: "stock" } }] }],
    });
    expect(results.map((r) => (r.ok ? `${r.line}:${r.identifier}:${r.record.price}` : "error" in r ? `${r.error.line}! ${r.error.message}` : "skip"))).toEqual([
      "2:A1:15.5",
      '3! the identifier "guid" is empty',
      '4! vendor_actions[0].calculate: stock = stock: field "stock" is "x", not a number',
      "5! line 5 has 2 fields, the header has 3",
      "6:0700:4.03",
    ]);
  });

  it("fails the header check naming the renamed column", async () => {
    const err = await mapFile("renamed.csv", "SKU,Quantity\nA1,5\n", { field_map: { guid: "SKU", stock: "Qty" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConveyorError);
    expect((err as ConveyorError).message).toContain('stock → "Qty"');
    expect((err as ConveyorError).message).toContain('Columns in the file: "SKU", "Quantity"');
  });

  it("maps a fixed-width feed by offsets", async () => {
    const results = await mapFile("feed.txt", "A00001  12\nA00002   7\n", { field_map: { guid: [0, 6], stock: [6, 10] }, vendor_actions: [{ functions: [{ name: "trim", arg: ["stock"] }] }] }, { format: "fixed" });
    expect(results.map((r) => (r.ok ? { ...r.record } : r))).toEqual([
      { guid: "A00001", stock: "12" },
      { guid: "A00002", stock: "7" },
    ]);
  });

  it("maps JSON by JSONPath and XML by XPath: expressions go to the reader, not to the column list", async () => {
    const json = '[{"sku":"000480","attributes":{"price":{"amount":"129.00"}},"barcodes":["0712345678925"]}]';
    const fromJson = await mapFile("feed.json", json, { field_map: { sku: "$.sku", price: "$.attributes.price.amount", upc: "$.barcodes[0]" }, identifier: "sku" }, { jsonpath: true });
    expect(fromJson.map((r) => (r.ok ? { ...r.record } : r))).toEqual([{ sku: "000480", price: "129.00", upc: "0712345678925" }]);
    const xml = "<feed><item><sku>05002E10</sku><availability><quantity>0</quantity></availability></item></feed>";
    const fromXml = await mapFile("feed.xml", xml, { field_map: { sku: "sku", stock: "availability/quantity" }, identifier: "sku" }, { xpath: true, root: "/feed/item" });
    expect(fromXml.map((r) => (r.ok ? { ...r.record } : r))).toEqual([{ sku: "05002E10", stock: "0" }]);
    const missing = await mapFile("feed2.json", json, { field_map: { sku: "$.sku", stock: "$.attributes.inventory.available" }, identifier: "sku" }, { jsonpath: true }).catch((e: unknown) => e);
    expect((missing as ConveyorError).message).toContain('stock → "$.attributes.inventory.available"');
  });
});
