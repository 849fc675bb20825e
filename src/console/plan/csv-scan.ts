/**
 * Reads the CSV files a run writes (plan.csv, errors.csv: RFC 4180, `"`
 * quotes, `""` inside them, line breaks inside quoted values) as a stream of
 * records with the byte offset each starts at, so a viewer can come back to
 * any record by seeking. A quote only ever opens or closes a quoted value in
 * these files (csv-cell.ts quotes every value that holds one), so a record
 * ends at the first line feed after an even number of quotes: the scan is two
 * native `indexOf`s per line plus one step per quote, never a byte loop.
 *
 * @module
 */

import type { Readable } from "node:stream";

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;

/** Called per record: `end` is past its line break; answer false to stop the scan. */
export type OnRecord = (buf: Buffer, start: number, end: number, offset: number) => boolean | void;

export interface ScanEnd {
  /** True when the scan read to the end of the file. */
  eof: boolean;
  /** Bytes after the last line break: a line cut off while it was written (a killed run), not a record. */
  cutBytes: number;
  /** Offset just past the last record handed out. */
  offset: number;
}

/**
 * Splits `stream` (read from byte `base` of the file) into records. Stops
 * (and destroys the stream) when `onRecord` answers false. Memory: one chunk
 * plus the one record that spans two chunks.
 */
export async function scanRecords(stream: Readable, base: number, onRecord: OnRecord): Promise<ScanEnd> {
  let carry: Buffer | null = null;
  let carryOffset = base;
  let offset = base;
  try {
    for await (const chunk of stream) {
      const buf: Buffer = carry ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
      const bufOffset = carry ? carryOffset : offset;
      let start = 0;
      let pos = 0;
      let inQuotes = false;
      let nextLf = buf.indexOf(LF, 0);
      let nextQuote = buf.indexOf(QUOTE, 0);
      for (;;) {
        if (inQuotes) {
          if (nextQuote < 0) break;
          inQuotes = false;
          pos = nextQuote + 1;
          nextQuote = buf.indexOf(QUOTE, pos);
          continue;
        }
        // A closing quote may have passed line breaks inside the value.
        if (nextLf >= 0 && nextLf < pos) nextLf = buf.indexOf(LF, pos);
        if (nextLf < 0) break;
        if (nextQuote >= 0 && nextQuote < nextLf) {
          inQuotes = true;
          pos = nextQuote + 1;
          nextQuote = buf.indexOf(QUOTE, pos);
          continue;
        }
        const end = nextLf + 1;
        if (onRecord(buf, start, end, bufOffset + start) === false) {
          stream.destroy();
          return { eof: false, cutBytes: 0, offset: bufOffset + end };
        }
        start = pos = end;
        nextLf = buf.indexOf(LF, pos);
      }
      // What is left is the beginning of a record: the next chunk finishes it (rescanned from its start).
      carry = start < buf.length ? buf.subarray(start) : null;
      carryOffset = bufOffset + start;
      offset = bufOffset + buf.length;
    }
  } finally {
    stream.destroy();
  }
  return { eof: true, cutBytes: carry ? carry.length : 0, offset: carryOffset };
}

/** The record's values (at most `max`), quotes removed; the line break is not part of the last. */
export function parseFields(buf: Buffer, start: number, end: number, max = Number.POSITIVE_INFINITY): string[] {
  let stop = end;
  if (stop > start && buf[stop - 1] === LF) stop--;
  if (stop > start && buf[stop - 1] === CR) stop--;
  const out: string[] = [];
  let pos = start;
  while (out.length < max) {
    if (buf[pos] === QUOTE) {
      let text = "";
      let from = pos + 1;
      for (;;) {
        const q = buf.indexOf(QUOTE, from);
        if (q < 0 || q >= stop) {
          // An unclosed quote (only in a damaged file): the rest is the value.
          text += buf.toString("utf8", from, stop);
          pos = stop;
          break;
        }
        text += buf.toString("utf8", from, q);
        if (buf[q + 1] === QUOTE) {
          text += '"';
          from = q + 2;
          continue;
        }
        pos = q + 1;
        break;
      }
      out.push(text);
    } else {
      let comma = buf.indexOf(COMMA, pos);
      if (comma < 0 || comma >= stop) comma = stop;
      out.push(buf.toString("utf8", pos, comma));
      pos = comma;
    }
    if (pos >= stop) break;
    // pos is at the comma after the value.
    pos++;
    if (pos === stop) {
      out.push("");
      break;
    }
  }
  return out;
}
