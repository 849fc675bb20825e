import type { RecordReader, SourceRow } from "./types.js";
import { XmlRecord } from "./xml-record.js";

/*
 * A feed in another character set than the one configured (a windows-1252
 * file read as UTF-8, the usual case) decodes without an error: every byte
 * the charset does not allow becomes U+FFFD, and a product title "Café" would
 * be written to the catalogue as "Caf\uFFFD". The decoder counts the pieces
 * where that happened; once it has, each record holding U+FFFD becomes a row
 * error naming the charset, and the records that decoded cleanly (plain ASCII
 * reads the same in every charset) go on. A wholly mis-set file trips
 * error_limit before anything is written.
 */

const REPLACEMENT = "\uFFFD";
/** U+FFFD as UTF-8: a file may hold the character itself. */
const REPLACEMENT_BYTES = Buffer.from(REPLACEMENT, "utf8");

export interface DecodeStats {
  /** Decoded pieces in which bytes were replaced because the charset does not allow them. */
  undecodable: number;
}

function occurrences(find: (from: number) => number, width: number): number {
  let n = 0;
  for (let at = find(0); at !== -1; at = find(at + width)) n++;
  return n;
}

/** Whether decoding `bytes` to `text` replaced bytes (more U+FFFD in the text than the bytes spelled out). */
export function replacedBytes(text: string, bytes: Buffer, utf8: boolean): boolean {
  if (!text.includes(REPLACEMENT)) return false;
  if (!utf8) return true;
  const inText = occurrences((from) => text.indexOf(REPLACEMENT, from), 1);
  return inText > occurrences((from) => bytes.indexOf(REPLACEMENT_BYTES, from), REPLACEMENT_BYTES.length);
}

const MAX_DEPTH = 8;

function holdsReplacement(value: unknown, depth: number): boolean {
  if (typeof value === "string") return value.includes(REPLACEMENT);
  if (value instanceof XmlRecord) return value.xml.includes(REPLACEMENT);
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object") return false;
  const values = Array.isArray(value) ? value : Object.getPrototypeOf(value) === Object.prototype ? Object.values(value) : [];
  return values.some((v) => holdsReplacement(v, depth + 1));
}

function problem(encoding: string): string {
  return `the record holds bytes that are not valid ${encoding} (read as \uFFFD): the file is in another character set; set encoding in the file config (windows-1252 and iso-8859-1 are the usual ones)`;
}

/**
 * The reader with each undecodable record marked as a row error. Until the
 * decoder has replaced a byte, rows pass through untouched, at no cost.
 */
export function markUndecodable(reader: RecordReader, stats: DecodeStats, encoding: string): RecordReader {
  const mark = (batch: readonly SourceRow[]): readonly SourceRow[] => {
    for (const row of batch) if (!row.error && holdsReplacement(row.raw, 0)) row.error = problem(encoding);
    return batch;
  };
  return {
    format: reader.format,
    bulkFile: reader.bulkFile,
    columns: () => reader.columns(),
    accessor: (ref) => reader.accessor(ref),
    close: () => reader.close(),
    async *batches(signal) {
      for await (const batch of reader.batches(signal)) yield stats.undecodable > 0 ? mark(batch) : batch;
    },
  };
}
