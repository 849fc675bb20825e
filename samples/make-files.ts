/**
 * Writes the sample supplier files that are binary or need exact bytes: the
 * UTF-8-with-BOM inventory CSV, the zipped windows-1252 TSV catalogue and the
 * XLSX price list. The generated files are committed; run this again only to
 * change them: `npx tsx samples/make-files.ts`.
 */
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ExcelJS from "exceljs";
import iconv from "iconv-lite";
import yazl from "yazl";

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXED_TIME = new Date("2026-03-01T05:00:00Z");

function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Acme's nightly inventory: Excel-made, so UTF-8 with a BOM, CRLF, quoted text with commas and inch marks. */
function inventoryCsv(): void {
  const header = ["Item Number", "Manufacturer Part", "UPC", "Description", "Brand", "Category", "Qty On Hand", "Qty On Order", "ETA", "Unit Cost", "MSRP", "MAP", "Weight (lb)", "Warehouse", "Status"];
  const rows = [
    ["000123", "713752E1", "0712345678901", 'Hose clamp, stainless, 1/2" (10-pack)', "Acme", "Plumbing > Clamps", "148", "0", "", "3.42", "7.99", "6.99", "0.40", "RNO", "Active"],
    ["000124", "713752E2", "0712345678918", 'Hose clamp, stainless, 3/4" (10-pack)', "Acme", "Plumbing > Clamps", "96", "200", "2026-03-15", "3.88", "8.99", "7.49", "0.45", "RNO", "Active"],
    ["000480", "AC-480-BLK", "0712345678925", "Cordless drill 18V, 2 batteries, case", "Acme Pro", "Tools > Drills", "12", "24", "2026-03-20", "61.10", "129.00", "119.00", "4.80", "RNO", "Active"],
    ["000481", "AC-481-BLK", "0712345678932", "Impact driver 18V, bare tool", "Acme Pro", "Tools > Drivers", "0", "36", "2026-04-02", "48.75", "99.00", "89.00", "3.10", "RNO", "Backorder"],
    ["001002", "1002-05", "0712345678949", "Shop towels, blue, 200 ct", "Acme", "Janitorial", "1204", "0", "", "8.15", "14.99", "", "2.20", "LAS", "Active"],
    ["001003", "1003-05", "0712345678956", 'Nitrile gloves, 5 mil, size L "powder-free"', "Acme", "Safety > Gloves", "310", "0", "", "6.40", "12.49", "11.99", "1.10", "LAS", "Active"],
    ["004410", "4410E5", "0712345678963", "Safety glasses, clear, anti-fog", "Acme", "Safety > Eyewear", "75", "0", "", "2.05", "5.99", "", "0.10", "LAS", "Active"],
    ["007001", "7001", "0712345678970", "Extension cord, 25 ft, 14/3, outdoor", "Acme", "Electrical > Cords", "22", "0", "", "18.60", "34.99", "32.99", "3.40", "RNO", "Active"],
    ["007002", "7002", "0712345678987", "Extension cord, 50 ft, 12/3, outdoor", "Acme", "Electrical > Cords", "9", "10", "2026-03-11", "31.25", "59.99", "54.99", "6.20", "RNO", "Active"],
    ["009999", "LEGACY-9999", "0712345678994", "Pipe wrench 14in (discontinued)", "Acme", "Tools > Wrenches", "3", "0", "", "14.00", "29.99", "", "2.90", "LAS", "Discontinued"],
    ["010250", "10250-A", "0071234567890", "Utility knife, retractable, w/ 5 blades", "Acme", "Tools > Knives", "140", "0", "", "4.10", "9.49", "8.99", "0.35", "RNO", "Active"],
    ["010251", "10250-B", "0071234567906", "Replacement blades, 100 ct, dispenser", "Acme", "Tools > Knives", "58", "0", "", "11.30", "21.99", "19.99", "0.60", "RNO", "Active"],
  ];
  const text = [header, ...rows].map((r) => r.map(csvCell).join(",")).join("\r\n") + "\r\n";
  writeFileSync(path.join(here, "files/acme/inventory_20260301.csv"), "\uFEFF" + text, "utf8");
}

/** Northwind's monthly catalogue: a TSV in windows-1252 (Café, Größe, €), zipped. */
async function catalogueZip(): Promise<void> {
  const header = ["SKU", "EAN", "Title", "Brand", "Description", "Colour", "Size", "Material", "Weight_g", "Price", "RRP", "Stock", "Image_URL", "Category", "Country_of_Origin"];
  const rows = [
    ["0100245", "4006381333931", "Café mug, stoneware", "Northwind Home", "Hand-glazed mug, 350 ml, dishwasher safe", "Cream", "350 ml", "Stoneware", "410", "9.90", "14.90", "64", "https://cdn.northwind.example/img/0100245.jpg", "Kitchen > Mugs", "PT"],
    ["0100246", "4006381333948", "Café mug, stoneware", "Northwind Home", "Hand-glazed mug, 350 ml, dishwasher safe", "Slate", "350 ml", "Stoneware", "410", "9.90", "14.90", "12", "https://cdn.northwind.example/img/0100246.jpg", "Kitchen > Mugs", "PT"],
    ["0200310", "4006381333955", "Linen apron – Größe M", "Northwind Textile", "Washed linen apron with pocket; adjustable strap", "Natural", "M", "Linen", "220", "24.50", "34.00", "30", "https://cdn.northwind.example/img/0200310.jpg", "Kitchen > Textiles", "LT"],
    ["0200311", "4006381333962", "Linen apron – Größe L", "Northwind Textile", "Washed linen apron with pocket; adjustable strap", "Natural", "L", "Linen", "240", "24.50", "34.00", "18", "https://cdn.northwind.example/img/0200311.jpg", "Kitchen > Textiles", "LT"],
    ["0300077", "4006381333979", "Chef's knife 20 cm", "Northwind Pro", "Forged X50CrMoV15 steel, full tang – €5 of each sale to the food bank", "Black", "20 cm", "Steel", "260", "59.00", "79.00", "7", "https://cdn.northwind.example/img/0300077.jpg", "Kitchen > Knives", "DE"],
    ["0300078", "4006381333986", "Paring knife 9 cm", "Northwind Pro", "Forged steel, full tang", "Black", "9 cm", "Steel", "90", "29.00", "39.00", "0", "https://cdn.northwind.example/img/0300078.jpg", "Kitchen > Knives", "DE"],
    ["0400900", "4006381333993", "Crème brûlée set (4 ramekins + torch)", "Northwind Home", "Porcelain ramekins, refillable butane torch", "White", "4 pcs", "Porcelain", "1350", "39.90", "49.90", "21", "https://cdn.northwind.example/img/0400900.jpg", "Kitchen > Bakeware", "FR"],
    ["0400901", "4006381334006", "Tarte tin Ø 28 cm", "Northwind Home", "Loose base, non-stick", "Grey", "28 cm", "Carbon steel", "480", "16.90", "22.00", "40", "https://cdn.northwind.example/img/0400901.jpg", "Kitchen > Bakeware", "FR"],
  ];
  const text = [header, ...rows].map((r) => r.join("\t")).join("\r\n") + "\r\n";
  const zip = new yazl.ZipFile();
  zip.addBuffer(iconv.encode(text, "windows-1252"), "catalogue_2026-03.tsv", { mtime: FIXED_TIME });
  zip.end();
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.pipe(createWriteStream(path.join(here, "files/northwind/catalogue_2026-03.zip"))).on("close", resolve).on("error", reject);
  });
}

/** Bolt & Nut's price list: a real workbook with a title row above the header, numbers as numbers, part numbers as text. */
async function priceListXlsx(): Promise<void> {
  const wb = new ExcelJS.Workbook();
  wb.creator = "Bolt & Nut Distribution";
  wb.created = FIXED_TIME;
  wb.modified = FIXED_TIME;
  const notes = wb.addWorksheet("Read me");
  notes.addRow(["Prices valid from 2026-03-01. Net prices in USD, excluding freight."]);
  const ws = wb.addWorksheet("Prices");
  ws.addRow(["Bolt & Nut Distribution – dealer price list March 2026"]);
  ws.addRow(["Part No", "Description", "UPC", "List Price", "Discount %", "Net Price", "Currency", "Min Qty", "Pack Size", "Lead Time (days)"]);
  const rows: [string, string, string, number, number, number, string, number, number, number][] = [
    ["713752E1", "Hex bolt M8x40, zinc, DIN 933", "0712345679007", 12.4, 35, 8.06, "USD", 1, 100, 2],
    ["713752E2", "Hex bolt M8x50, zinc, DIN 933", "0712345679014", 13.9, 35, 9.04, "USD", 1, 100, 2],
    ["0045210", "Nyloc nut M8, zinc, DIN 985", "0712345679021", 6.2, 35, 4.03, "USD", 1, 200, 2],
    ["0045211", "Washer M8, zinc, DIN 125", "0712345679038", 3.1, 35, 2.02, "USD", 1, 500, 2],
    ["0098000", "Anchor bolt 10x100, \"heavy duty\"", "0712345679045", 44.0, 30, 30.8, "USD", 5, 25, 7],
    ["1200E10", "Threaded rod M10 x 1 m, A2 stainless", "0712345679052", 9.75, 25, 7.31, "USD", 10, 1, 5],
  ];
  for (const r of rows) ws.addRow(r);
  // Part numbers stay text in the workbook, as suppliers' exports have them.
  ws.getColumn(1).numFmt = "@";
  mkdirSync(path.join(here, "storage/pricelists"), { recursive: true });
  await wb.xlsx.writeFile(path.join(here, "storage/pricelists/prices_2026-03.xlsx"));
}

inventoryCsv();
await catalogueZip();
await priceListXlsx();
console.log("sample files written");
