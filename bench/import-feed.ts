/**
 * The supplier feed of `bench:import`: 15 quoted columns, 12 of them mapped
 * by the bench's automation, with identifiers that ascend with the rows or,
 * with `--unordered`, come in no order.
 *
 * @module
 */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { benchIdentifier } from "./identifiers.js";

const HEADER = ["Item GUID", "Item Number", "Title", "Description", "Brand", "Price", "Qty", "Weight", "EAN", "Category", "Color", "Size", "Material", "Supplier", "Notes"];
export const FIELD_MAP = { guid: "Item GUID", sku: "Item Number", title: "Title", description: "Description", brand: "Brand", price: "Price", stock: "Qty", weight: "Weight", ean: "EAN", category: "Category", color: "Color", size: "Size" };
export const CHANGED_EVERY = 100;

/**
 * `--unordered`: identifiers in no order, as UUIDs come (led by a hash of the row's number); otherwise they
 * ascend with the rows, and every B-tree keyed by them fills at its end.
 */
const unordered = process.argv.includes("--unordered");

/** The feed's rows: `changed` bumps every 100th stock, `reprice` every row's price and stock (the undo journal's worst case). */
export type Variant = "base" | "changed" | "reprice";

function row(r: number, variant: Variant): string[] {
  const changed = variant === "changed";
  const shift = variant === "reprice" ? 1 : 0;
  const stock = (r * 31) % 500 + shift;
  return [
    benchIdentifier("G", r, 12, unordered),
    `SKU-${r}`,
    `Product ${r} "${["Alpha", "Beta", "Gamma"][r % 3]}" edition`,
    `Desc, "quoted" ${r} lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua`,
    `Brand ${r % 250}`,
    ((r % 9000) / 100 + 1 + shift).toFixed(2),
    String(changed && r % CHANGED_EVERY === 0 ? stock + 1 : stock),
    ((r % 5000) / 1000).toFixed(3),
    String(4_000_000_000_000 + r),
    `Category ${r % 40} > Sub ${r % 7}`,
    ["red", "green", "blue", "black"][r % 4] ?? "",
    String(r % 50),
    `material-${(r * 7919) % 100000}-abcdefgh`,
    `supplier-${r % 12}`,
    `note-${(r * 104729) % 100000}-ijklmnop-qrstuvwx`,
  ];
}

/** Streams the feed to `file`; `changed` bumps the stock of every 100th row. */
export async function generate(file: string, rows: number, variant: Variant): Promise<void> {
  const quote = (v: string): string => `"${v.replace(/"/g, '""')}"`;
  const out = createWriteStream(file);
  let buffer = `${HEADER.map(quote).join(",")}\n`;
  for (let r = 1; r <= rows; r++) {
    buffer += `${row(r, variant).map(quote).join(",")}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  }
  out.end(buffer);
  await once(out, "finish");
}

/** The feed's columns, mapped or not. */
export const FEED_COLUMNS = HEADER.length;
