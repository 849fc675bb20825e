import { stat } from "node:fs/promises";
import { encodeXstring } from "./xlsx-reader.js";
import type { RecordWriter } from "./types.js";

/** Rows between yields to the event loop, so the zip stream can flush to disk as rows come in. */
const YIELD_EVERY = 500;

/** XLSX through exceljs's streaming writer: each row is committed (written out) as soon as it is added. */
export async function openXlsxWriter(localPath: string, columns: string[]): Promise<RecordWriter> {
  // Loaded by the first XLSX export, not by the program (see xlsx-reader.ts).
  const { default: ExcelJS } = await import("exceljs");
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: localPath, useSharedStrings: false, useStyles: false });
  const sheet = workbook.addWorksheet("Sheet1");
  sheet.addRow(columns.map(encodeXstring)).commit();
  let rows = 0;
  return {
    write: async (record) => {
      // Values are strings, written as text cells: identifiers keep their leading zeros in Excel too.
      sheet.addRow(columns.map((c) => encodeXstring(record[c] ?? ""))).commit();
      rows++;
      if (rows % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    },
    close: async () => {
      sheet.commit();
      await workbook.commit();
      return { rows, bytes: (await stat(localPath)).size };
    },
  };
}
