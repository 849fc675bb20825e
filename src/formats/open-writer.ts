import { ConveyorError } from "../errors.js";
import { openCsvWriter, openJsonWriter } from "./text-writers.js";
import { openXlsxWriter } from "./xlsx-writer.js";
import { openXmlWriter } from "./xml-writer.js";
import type { RecordWriter, WriteFormat, WriteOptions } from "./types.js";

const BY_EXTENSION: Record<string, WriteFormat> = {
  csv: "csv",
  txt: "csv",
  tsv: "tsv",
  tab: "tsv",
  json: "json",
  jsonl: "jsonl",
  ndjson: "jsonl",
  xml: "xml",
  xlsx: "xlsx",
};

/** The export format: `format` when set, else the extension of `name`, else CSV. */
export function writeFormat(options: Pick<WriteOptions, "format" | "name">): WriteFormat {
  if (options.format) return options.format;
  const dot = options.name?.lastIndexOf(".") ?? -1;
  const ext = dot < 0 ? "" : (options.name ?? "").slice(dot + 1).toLowerCase();
  return BY_EXTENSION[ext] ?? "csv";
}

/** Opens a streaming writer of export records; `close()` reports rows and bytes written. */
export async function openWriter(localPath: string, options: WriteOptions): Promise<RecordWriter> {
  const format = writeFormat(options);
  if (!options.columns.length) {
    throw new ConveyorError("definition_invalid", "An export needs at least one column: field_map is empty");
  }
  const dialect = csvDialect(options);
  if (dialect) return openCsvWriter(localPath, options.columns, dialect.delimiter, dialect.enclosure);
  switch (format) {
    case "json":
      return openJsonWriter(localPath, options.columns, false);
    case "jsonl":
      return openJsonWriter(localPath, options.columns, true);
    case "xml":
      return openXmlWriter(localPath, options.columns, options.root);
    case "xlsx":
      return openXlsxWriter(localPath, options.columns);
    default:
      throw new ConveyorError("internal", `No writer for the format ${format}`);
  }
}

/** Delimiter and enclosure of a CSV or TSV export (checked), or null for the other formats. */
export function csvDialect(options: WriteOptions): { delimiter: string; enclosure: string } | null {
  const format = writeFormat(options);
  if (format !== "csv" && format !== "tsv") return null;
  const delimiter = format === "tsv" ? "\t" : oneChar("delimiter", options.delimiter === "\\t" ? "\t" : (options.delimiter ?? ","));
  return { delimiter, enclosure: oneChar("enclosure", options.enclosure ?? '"') };
}

function oneChar(field: string, value: string): string {
  if (value.length !== 1 || value === "\n" || value === "\r") {
    throw new ConveyorError("definition_invalid", `${field} must be one character, got ${JSON.stringify(value)}`, { details: { field } });
  }
  return value;
}
