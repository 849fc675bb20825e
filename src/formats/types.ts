/** A field_map value: column/property/element name, JSONPath, XPath, or [start,end) character offsets. */
export type FieldRef = string | [number, number];

/**
 * One record of a source file. `line` is the physical line where the record starts
 * (CSV, TSV, fixed width: 1-based, counting header and skipped lines) or the record's
 * number (JSON, XML: 1-based element number; XLSX: the sheet row number).
 */
export interface SourceRow {
  line: number;
  raw: unknown;
  /** How many cells `raw` holds, where the reader counts them without cutting them out (a CSV record). */
  readonly width?: number;
  /** The zip entry the record came from, when the archive held several matching entries. */
  entry?: string;
  /** A parse problem of this record (an unterminated or stray quote), for the mapper's row error. */
  error?: string;
  /** The file ends inside this record, with no line break after it: if the record is also bad, the file was cut short. */
  open?: boolean;
}

export type ReadFormat = "csv" | "fixed" | "json" | "xml" | "xlsx" | "bulk";

/** The reading keys of a file config (automations.md), with normalized types. */
export interface ReadOptions {
  format?: ReadFormat;
  delimiter?: string;
  enclosure?: string;
  headers?: string[];
  skip_lines?: number;
  encoding?: string;
  sheet?: string | number;
  root?: string;
  jsonpath?: boolean;
  xpath?: boolean;
  bulk_file?: boolean;
  /** Regular expression of the zip entry names to read (`/…/i` allowed); the only entry when absent or unmatched. */
  name?: string;
  /**
   * Most records will be read by their text alone (a diff run settles them
   * by its hash): a CSV record's cells are found when one is read, not as
   * the record is scanned.
   */
  cellsOnDemand?: boolean;
}

export type Accessor = (row: SourceRow) => string | undefined;

export interface RecordReader {
  readonly format: string;
  /** True for a service bulk file (`action` column first): the pipeline sends it as it is. */
  readonly bulkFile: boolean;
  /** The columns the file has, for the header check and its message; null when unknowable (fixed width). */
  columns(): Promise<string[] | null>;
  /**
   * An accessor for a field_map value, built once: exact name first, then ignoring case and
   * surrounding spaces. Ambiguous → ConveyorError header_mismatch; missing → null.
   */
  accessor(ref: FieldRef): Accessor | null;
  /** The records, a batch at a time (`eachRow` gives them one by one). */
  batches(signal?: AbortSignal): AsyncIterable<readonly SourceRow[]>;
  close(): Promise<void>;
}

export type WriteFormat = "csv" | "tsv" | "json" | "jsonl" | "xml" | "xlsx";

export interface WriteOptions {
  format?: WriteFormat;
  /** The export file name; its extension picks the format when `format` is absent. */
  name?: string;
  columns: string[];
  delimiter?: string;
  enclosure?: string;
  /** XML: `records` or `records/record` (root element, record element). */
  root?: string;
}

export interface RecordWriter {
  write(record: Record<string, string>): Promise<void>;
  /** Rows as values in column order, when the writer can take a batch at once (CSV, TSV). */
  writeRows?(rows: readonly (readonly string[])[]): Promise<void>;
  close(): Promise<{ rows: number; bytes: number }>;
}
