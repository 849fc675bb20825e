export type {
  Accessor,
  FieldRef,
  ReadFormat,
  ReadOptions,
  RecordReader,
  RecordWriter,
  SourceRow,
  WriteFormat,
  WriteOptions,
} from "./types.js";
export { eachRow } from "./batches.js";
export { openReader } from "./open-reader.js";
export { csvDialect, openWriter, writeFormat } from "./open-writer.js";
export { detectFormat, type Detected } from "./detect.js";
export { widthProblem } from "./csv-reader.js";
export { CsvRecord } from "./csv-record.js";
export { resolveColumn } from "./columns.js";
export { csvField, csvLine } from "./text-writers.js";
