import { writeFile } from "node:fs/promises";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader } from "../../src/formats/index.js";
import { allRows, readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;

/**
 * exceljs's writeFile can resolve before its file stream has flushed the end
 * of the zip; a reader opening it at once then misses workbook.xml (CI saw
 * "cannot read properties of undefined (reading 'sheets')"). The buffer is
 * complete when it resolves.
 */
async function writeBook(wb: ExcelJS.Workbook, file: string): Promise<void> {
  await writeFile(file, Buffer.from(await wb.xlsx.writeBuffer()));
}
let book: string;

beforeAll(async () => {
  dir = await tempDir();
  const wb = new ExcelJS.Workbook();
  const info = wb.addWorksheet("Info");
  info.addRow(["note"]);
  info.addRow(["not data"]);
  const stock = wb.addWorksheet("Stock");
  stock.addRow(["SKU", "Qty", "Price", "Date", "Stamp", "Flag", "Formula", "Rich"]);
  stock.addRow(["0700", 5, 0.1 + 0.2, new Date(Date.UTC(2024, 2, 31)), new Date(Date.UTC(2024, 2, 31, 13, 5, 9)), true, { formula: "B2*2", result: 10 }, { richText: [{ text: "Bold" }, { text: " tail" }] }]);
  stock.addRow(["0712345678901", 12345678901234, 1.5]);
  stock.getCell("D2").numFmt = "yyyy-mm-dd";
  stock.getCell("E2").numFmt = "yyyy-mm-dd hh:mm:ss";
  book = dir.path("book.xlsx");
  await writeBook(wb, book);
});
afterAll(() => dir.remove());

describe("XLSX reader", () => {
  it("reads a sheet by name with values as text", async () => {
    const reader = await openReader(book, { sheet: "Stock" });
    expect(reader.format).toBe("xlsx");
    expect(await reader.columns()).toEqual(["SKU", "Qty", "Price", "Date", "Stamp", "Flag", "Formula", "Rich"]);
    const names = ["sku", "qty", "price", "date", "stamp", "flag", "formula", "rich"];
    const accessors = names.map((n) => reader.accessor(n));
    const rows = await allRows(reader);
    expect(rows.map((r) => r.line)).toEqual([2, 3]);
    expect(rows.map((r) => accessors.map((get) => get?.(r)))).toEqual([
      ["0700", "5", "0.3", "2024-03-31", "2024-03-31T13:05:09", "true", "10", "Bold tail"],
      ["0712345678901", "12345678901234", "1.5", "", "", "", "", ""],
    ]);
  });

  it("reads a sheet by 1-based index, the first sheet by default, and names the sheets when one is missing", async () => {
    expect((await readRecords(book, { sheet: 2 }, ["SKU"])).records.length).toBe(2);
    expect((await readRecords(book, {}, ["note"])).records).toEqual([{ note: "not data" }]);
    await expect(openReader(book, { sheet: "Prices" })).rejects.toMatchObject({
      code: "file_format",
      message: expect.stringContaining("Info, Stock"),
    });
  });

  it("takes the columns from headers for a sheet without a header row: its first row is data", async () => {
    const named = await readRecords(book, { sheet: "Stock", headers: ["sku", "qty"] }, ["sku", "qty"]);
    expect(named.records).toEqual([
      { sku: "SKU", qty: "Qty" },
      { sku: "0700", qty: "5" },
      { sku: "0712345678901", qty: "12345678901234" },
    ]);
    await expect(openReader(book, { sheet: "Prices", headers: ["sku"] })).rejects.toMatchObject({ code: "file_format" });
  });

  it("drops the sheet rows above the header that skip_lines names (a title row)", async () => {
    const wb = new ExcelJS.Workbook();
    const prices = wb.addWorksheet("Prices");
    prices.addRow(["Dealer price list March 2026"]);
    prices.addRow(["Part No", "Net Price"]);
    prices.addRow(["713752E1", 8.06]);
    const titled = dir.path("titled.xlsx");
    await writeBook(wb, titled);
    const reader = await openReader(titled, { sheet: "Prices", skip_lines: 1 });
    expect(await reader.columns()).toEqual(["Part No", "Net Price"]);
    const get = [reader.accessor("Part No"), reader.accessor("Net Price")];
    const rows = await allRows(reader);
    expect(rows.map((r) => [r.line, ...get.map((g) => g?.(r))])).toEqual([[3, "713752E1", "8.06"]]);
  });
});
