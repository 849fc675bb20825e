import { ConveyorError } from "../errors.js";
import { RowBatches } from "./batches.js";
import { looseKey, namedColumn } from "./columns.js";
import { parseCsv } from "./csv-parse.js";
import { CsvRecord } from "./csv-record.js";
import type { Accessor, FieldRef, RecordReader, SourceRow } from "./types.js";

export interface CsvReaderOptions {
  delimiter?: string;
  enclosure?: string;
  headers?: string[];
  skip_lines?: number;
  bulk?: boolean;
  cellsOnDemand?: boolean | undefined;
}

/** Row width problems are the mapper's call; this says what was wrong in words a person can act on. */
export function widthProblem(columns: readonly string[] | null, row: SourceRow): string | null {
  if (!columns) return null;
  // A CSV record counts its cells without cutting them out: those the mapping does not read are never made.
  const width = row.width ?? (Array.isArray(row.raw) ? row.raw.length : null);
  if (width === null || width === columns.length) return null;
  return `line ${row.line} has ${width} ${width === 1 ? "field" : "fields"}, the header has ${columns.length}`;
}

export async function openCsvReader(
  text: AsyncIterable<string>,
  options: CsvReaderOptions,
  onClose: () => Promise<void> = async () => {},
): Promise<RecordReader> {
  const delimiter = checkChar("delimiter", options.delimiter ?? ",");
  const enclosure = checkChar("enclosure", options.enclosure ?? '"');
  const batches = new RowBatches(parseCsv(text, { delimiter, enclosure, skipLines: options.skip_lines ?? 0, cellsOnDemand: options.cellsOnDemand === true }));
  let columns: string[];
  if (options.headers?.length) {
    columns = [...options.headers];
  } else {
    const header = await batches.shift();
    columns = header && Array.isArray(header.raw) ? (header.raw as string[]) : [];
  }
  const bulk = options.bulk === true;
  if (bulk && looseKey(columns[0] ?? "") !== "action") {
    await batches.close();
    await onClose();
    throw new ConveyorError(
      "file_format",
      `A bulk file starts with the column "action", this file starts with ${JSON.stringify(columns[0] ?? "")}`,
      { hint: "Set bulk_file to 0 and map the columns with field_map, or fix the file's first column." },
    );
  }
  return {
    format: bulk ? "bulk" : "csv",
    bulkFile: bulk,
    columns: async () => columns,
    accessor: (ref: FieldRef): Accessor | null => {
      const index = namedColumn(columns, ref);
      if (index === null) return null;
      // A record not yet cut into cells gives this one cell alone: a diff run reads only the identifier of most rows.
      return (row) => (row instanceof CsvRecord ? row.cell(index) : (row.raw as string[])[index]);
    },
    batches: (signal) => batches.batches(signal),
    close: async () => {
      await batches.close();
      await onClose();
    },
  };
}

function checkChar(field: "delimiter" | "enclosure", value: string): string {
  const normalized = value === "\\t" ? "\t" : value;
  if (normalized.length !== 1 || normalized === "\n" || normalized === "\r") {
    throw new ConveyorError("definition_invalid", `${field} must be one character, got ${JSON.stringify(value)}`, {
      details: { field },
      hint: field === "delimiter" ? 'Use "," or ";" or "|" or "\\t" for TSV.' : 'Use "\\"" or "\'".',
    });
  }
  return normalized;
}
