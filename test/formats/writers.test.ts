import { readFile, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader, openWriter, writeFormat } from "../../src/formats/index.js";
import type { WriteFormat } from "../../src/formats/index.js";
import { readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const COLUMNS = ["sku", "name", "note", "qty"];
const NASTY: Array<Record<string, string>> = [
  { sku: "0700", name: 'Say "hi", then go', note: "line1\nline2", qty: "713752E1" },
  { sku: "0712345678901", name: "  padded  ", note: "crlf\r\nand\rcr", qty: "" },
  { sku: "00042", name: "Größe – ☕ 𝄞 日本", note: "semi;colon|pipe\ttab", qty: "1.50" },
  { sku: "x", name: "", note: "_x0041_ literal", qty: "-0" },
  { sku: "'quote'", name: "<tag> & 'apos' \"dq\"", note: '""', qty: "0" },
];

async function roundTrip(format: WriteFormat, extra: { delimiter?: string; enclosure?: string } = {}): Promise<string> {
  const path = dir.path(`out-${format}-${extra.delimiter === ";" ? "semi" : "std"}.${format}`);
  const writer = await openWriter(path, { format, columns: COLUMNS, ...extra });
  for (const record of NASTY) await writer.write(record);
  const { rows, bytes } = await writer.close();
  expect(rows).toBe(NASTY.length);
  expect(bytes).toBe((await stat(path)).size);
  const { records, columns } = await readRecords(path, { ...extra, format: format === "tsv" ? "csv" : format === "jsonl" ? "json" : format, delimiter: format === "tsv" ? "\t" : extra.delimiter }, COLUMNS);
  expect(columns).toEqual(COLUMNS);
  expect(records).toEqual(NASTY);
  return path;
}

describe("writers round-trip through the readers", () => {
  for (const format of ["csv", "tsv", "json", "jsonl", "xml", "xlsx"] as const) {
    it(`${format}: the same records come back, nasty values included`, async () => {
      await roundTrip(format);
    });
  }

  it("csv with another delimiter and enclosure", async () => {
    const path = await roundTrip("csv", { delimiter: ";", enclosure: "'" });
    const text = await readFile(path, "utf8");
    expect(text.split("\r\n")[0]).toBe("sku;name;note;qty");
    expect(text).toContain("'''quote'''");
  });

  it("csv quotes only what needs it, with CRLF rows", async () => {
    const path = dir.path("plain.csv");
    const writer = await openWriter(path, { columns: ["a", "b", "c"] });
    await writer.write({ a: "plain", b: "has,comma", c: " lead" });
    await writer.close();
    expect(await readFile(path, "utf8")).toBe('a,b,c\r\nplain,"has,comma"," lead"\r\n');
  });

  it("json is an array, empty when there are no records", async () => {
    const path = dir.path("empty.json");
    const writer = await openWriter(path, { name: "export.json", columns: ["a"] });
    expect(await writer.close()).toEqual({ rows: 0, bytes: 3 });
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual([]);
    const one = dir.path("one.json");
    const w = await openWriter(one, { format: "json", columns: ["b", "a"] });
    await w.write({ a: "1", b: "2", ignored: "x" });
    await w.close();
    expect(await readFile(one, "utf8")).toBe('[\n{"b":"2","a":"1"}\n]\n');
  });

  it("xml sanitizes element names, names root and record elements, and drops characters XML cannot hold", async () => {
    const path = dir.path("names.xml");
    const writer = await openWriter(path, { format: "xml", columns: ["1st col", "a/b", "a?b", "xmlish"], root: "/products/product" });
    await writer.write({ "1st col": "v\u0001", "a/b": "x", "a?b": "y", xmlish: "z" });
    await writer.close();
    const text = await readFile(path, "utf8");
    expect(text).toContain("<products>\n  <product><_1st_col>v</_1st_col><a_b>x</a_b><a_b_2>y</a_b_2><_xmlish>z</_xmlish></product>\n</products>");
    const reader = await openReader(path, { root: "/products/product" });
    expect(await reader.columns()).toEqual(["_1st_col", "a_b", "a_b_2", "_xmlish"]);
    await reader.close();
  });

  it("picks the format from the name's extension, CSV otherwise", () => {
    expect(writeFormat({ name: "stock-2024.TSV" })).toBe("tsv");
    expect(writeFormat({ name: "a.ndjson" })).toBe("jsonl");
    expect(writeFormat({ name: "a.xlsx" })).toBe("xlsx");
    expect(writeFormat({ name: "a.dat" })).toBe("csv");
    expect(writeFormat({ name: "a.xml", format: "json" })).toBe("json");
  });

  it("writes many rows with bounded memory and the right byte count", async () => {
    const path = dir.path("many.csv");
    const writer = await openWriter(path, { columns: ["id", "text"] });
    for (let i = 0; i < 50_000; i++) await writer.write({ id: String(i), text: `row "${i}", ${"x".repeat(i % 30)}` });
    const { rows, bytes } = await writer.close();
    expect(rows).toBe(50_000);
    expect(bytes).toBe((await stat(path)).size);
    const { records } = await readRecords(path, {}, ["id", "text"]);
    expect(records[49_999]).toEqual({ id: "49999", text: `row "49999", ${"x".repeat(49_999 % 30)}` });
  });
});
