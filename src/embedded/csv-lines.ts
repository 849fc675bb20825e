/**
 * The embedded service's CSV lines (RFC 4180 quoting, each with its line
 * break): an export job's rows, quoted without an array of cells per row
 * (the job quotes millions of them), and any other line. A module of its
 * own, importing nothing: an export's threads load it alone.
 *
 * @module
 */

const NEEDS_QUOTES = /[",\r\n]/;

function cell(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One item's values in the columns' order. */
export function itemLine(item: Record<string, string>, columns: readonly string[]): string {
  let line = "";
  for (let i = 0; i < columns.length; i++) line += (i === 0 ? "" : ",") + cell(String(item[columns[i] as string] ?? ""));
  return `${line}\r\n`;
}

/** Cells already in the columns' order. */
export function cellsLine(cells: readonly string[]): string {
  let line = "";
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? "" : ",") + cell(cells[i] ?? "");
  return `${line}\r\n`;
}

/** One line of any cells. */
export function csvLine(cells: readonly (string | number)[]): string {
  return cellsLine(cells.map(String));
}
