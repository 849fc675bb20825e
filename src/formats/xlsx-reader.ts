import type { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";
import { RowBatches } from "./batches.js";
import { namedColumn } from "./columns.js";
import type { Accessor, FieldRef, ReadOptions, RecordReader, SourceRow } from "./types.js";

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** Excel stores dates as numbers; exceljs hands them over as UTC dates. A date without time is a date. */
export function isoDate(d: Date): string {
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (!d.getUTCHours() && !d.getUTCMinutes() && !d.getUTCSeconds() && !d.getUTCMilliseconds()) return date;
  return `${date}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/**
 * OOXML strings carry characters XML would alter (a CR) as `_xHHHH_`, and a literal `_xHHHH_`
 * as `_x005F_xHHHH_` (Excel writes both); exceljs's streaming reader leaves them encoded.
 */
export function decodeXstring(text: string): string {
  if (!text.includes("_x")) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function encodeXstring(text: string): string {
  if (!text.includes("_x") && !text.includes("\r")) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, "_x005F_x$1_").replace(/\r/g, "_x000D_");
}

/** Cell value as text: 15 significant digits is what Excel shows, so 0.1+0.2 reads as 0.3. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return decodeXstring(value);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(15)));
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value instanceof Date) return isoDate(value);
  if (typeof value === "object") {
    const v = value as { richText?: Array<{ text: string }>; result?: unknown; text?: unknown; error?: string };
    if (Array.isArray(v.richText)) return decodeXstring(v.richText.map((r) => r.text).join(""));
    if ("result" in v) return cellText(v.result);
    if (v.text !== undefined) return cellText(v.text);
    if (v.error !== undefined) return v.error;
  }
  return String(value);
}

interface SheetInfo {
  name: string;
}

export async function openXlsxReader(
  input: Readable,
  options: Pick<ReadOptions, "sheet" | "skip_lines" | "headers">,
  onClose: () => Promise<void> = async () => {},
): Promise<RecordReader> {
  const sheet = options.sheet;
  const skipLines = options.skip_lines ?? 0;
  // ExcelJS is the heaviest library here (some 170 modules): loaded by the first XLSX file, not by the program.
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    sharedStrings: "cache",
    styles: "cache",
    hyperlinks: "ignore",
    worksheets: "emit",
    entries: "ignore",
  });
  const seenSheets: string[] = [];

  const wanted = (name: string, position: number): boolean => {
    if (sheet === undefined || sheet === "") return position === 1;
    if (typeof sheet === "number") {
      const ordered = (workbook as unknown as { model?: { sheets?: SheetInfo[] } }).model?.sheets;
      return ordered?.length ? ordered[sheet - 1]?.name === name : position === sheet;
    }
    return name === sheet || name.trim().toLowerCase() === sheet.trim().toLowerCase();
  };

  async function* parse(): AsyncGenerator<SourceRow[]> {
    let position = 0;
    for await (const ws of workbook) {
      position++;
      const name = (ws as unknown as { name: string }).name;
      seenSheets.push(name);
      if (!wanted(name, position)) {
        for await (const _row of ws) void _row;
        continue;
      }
      for await (const row of ws) {
        // A title block above the header (price lists have one): sheet rows up to skip_lines are dropped.
        if (row.number <= skipLines) continue;
        const values = Array.isArray(row.values) ? row.values : [];
        const cells: string[] = [];
        for (let i = 1; i < values.length; i++) cells.push(cellText(values[i]));
        yield [{ line: row.number, raw: cells }];
      }
      return;
    }
    throw new ConveyorError("file_format", `The workbook has no sheet ${JSON.stringify(sheet)}; sheets: ${seenSheets.join(", ") || "none"}`, {
      details: { field: "sheet", sheets: seenSheets },
      hint: "Set sheet to one of the names listed, or to its 1-based position.",
    });
  }

  const batches = new RowBatches(parse());
  // `headers` names the columns of a sheet without a header row: its first row is data.
  let columns: string[] = options.headers?.length ? [...options.headers] : [];
  try {
    if (columns.length === 0) {
      const header = await batches.shift();
      columns = header ? (header.raw as string[]) : [];
    } else {
      // The sheet is opened (and a missing one refused) before any row is used.
      await batches.head(1);
    }
  } catch (err) {
    input.destroy();
    await onClose();
    if (err instanceof ConveyorError) throw err;
    throw new ConveyorError("file_format", `The xlsx workbook cannot be read: ${String(err)}`, { cause: err });
  }
  const width = columns.length;
  return {
    format: "xlsx",
    bulkFile: false,
    columns: async () => columns,
    accessor: (ref: FieldRef): Accessor | null => {
      const index = namedColumn(columns, ref);
      if (index === null) return null;
      // Trailing empty cells are not stored in the sheet: inside the header's width they are empty, not missing.
      return (row) => {
        const cells = row.raw as string[];
        return index < cells.length ? cells[index] : index < width ? "" : undefined;
      };
    },
    batches: (signal) => batches.batches(signal),
    close: async () => {
      await batches.close();
      input.destroy();
      await onClose();
    },
  };
}
