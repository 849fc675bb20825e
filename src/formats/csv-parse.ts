import Papa from "papaparse";
import { ConveyorError } from "../errors.js";
import { CsvRecord, INCOMPLETE, IRREGULAR, RecordScanner, scannable, type CsvSyntax } from "./csv-record.js";
import type { SourceRow } from "./types.js";

export interface CsvParseOptions {
  delimiter: string;
  enclosure: string;
  skipLines: number;
  /** Find where a record's cells start only when one is read (csv-record.ts), for a reader of most records by their text. */
  cellsOnDemand?: boolean;
}

type Newline = "\n" | "\r\n" | "\r";

/**
 * No real record is this long; an enclosure that is never closed would otherwise pull the rest of
 * the file into one field, re-parsed chunk after chunk.
 */
const MAX_RECORD_CHARS = 16 * 1024 * 1024;

/** The file's line break, from the first one seen: papaparse's own guessing is bypassed with its Parser. */
function guessNewline(text: string): Newline {
  const lf = text.indexOf("\n");
  if (lf > 0 && text[lf - 1] === "\r") return "\r\n";
  if (lf >= 0) return "\n";
  return text.includes("\r") ? "\r" : "\n";
}

function countChar(text: string, char: string, end: number): number {
  let count = 0;
  let at = text.indexOf(char);
  while (at !== -1 && at < end) {
    count++;
    at = text.indexOf(char, at + 1);
  }
  return count;
}

/**
 * Streams CSV rows as CsvRecords with the physical line each starts on. The
 * record scanner (csv-record.ts) cuts each decoded chunk into records and
 * leaves their cells for later; from the first record it finds irregular to
 * the end of that chunk, papaparse's Parser reads the rows (its cells at
 * once), with the unfinished last row carried over as its streamers do. The
 * loop stays pull-based and needs no callbacks or pausing. Never
 * dynamicTyping: every value stays text. Empty lines are skipped but counted.
 * `scan: false` reads with papaparse alone (the tests' reference).
 */
export async function* parseCsv(text: AsyncIterable<string>, options: CsvParseOptions & { scan?: boolean }): AsyncGenerator<SourceRow[]> {
  const iterator = text[Symbol.asyncIterator]();
  let newline: Newline | null = null;
  let parser: Papa.Parser | null = null;
  let syntax: CsvSyntax | null = null;
  let breakChar = "\n";
  let carry = "";
  let toSkip = options.skipLines;
  let line = 1;

  const tooLong = (input: string, cursor: number): void => {
    if (carry.length <= MAX_RECORD_CHARS) return;
    throw new ConveyorError(
      "file_format",
      `The record starting on line ${line + countChar(input, breakChar, cursor)} is longer than 16 MB: an enclosure (${options.enclosure}) is probably never closed`,
      { hint: "Check the file around that line, or set enclosure to the quote character the file uses." },
    );
  };

  const parse = (input: string, final: boolean, out: SourceRow[]): void => {
    if (!parser || !syntax) return;
    const result = parser.parse(input, 0, !final) as Papa.ParseResult<string[]>;
    const cursor = final ? input.length : result.meta.cursor;
    carry = final ? "" : input.slice(cursor);
    tooLong(input, cursor);
    const data = result.data;
    const errors = new Map<number, string>();
    for (const e of result.errors) if (typeof e.row === "number") errors.set(e.row, `${e.message} (${e.code})`);
    // Each row ends with one line break; when there are more breaks than rows, some sit in quoted fields.
    const plain = !final && countChar(input, breakChar, cursor) === data.length;
    for (let i = 0; i < data.length; i++) {
      const fields = data[i] ?? [];
      const start = line;
      line += 1;
      if (!plain) for (const f of fields) if (f.includes(breakChar)) line += countChar(f, breakChar, f.length);
      if (fields.length === 1 && fields[0] === "") continue;
      const row = new CsvRecord(start, undefined, syntax, fields);
      const error = errors.get(i);
      if (error !== undefined) row.error = error;
      out.push(row);
    }
  };

  /** The records of `input` up to the first irregular one, then papaparse's rows of the rest. */
  const scan = (input: string, final: boolean, out: SourceRow[]): void => {
    if (!syntax) return;
    const empty = syntax.enclosure + syntax.enclosure;
    const width = syntax.newline.length;
    const scanner = new RecordScanner(input, final, syntax, options.cellsOnDemand !== true);
    let at = 0;
    while (at < input.length) {
      const end = scanner.end(at);
      if (end === IRREGULAR) return parse(input.slice(at), final, out);
      if (end === INCOMPLETE) break;
      const record = input.slice(at, end);
      const start = line;
      line += record.includes(breakChar) ? 1 + countChar(record, breakChar, record.length) : 1;
      // papaparse reads both as one empty cell, which is an empty line.
      if (record !== "" && record !== empty) out.push(new CsvRecord(start, record, syntax, undefined, scanner));
      at = end + width;
    }
    carry = at >= input.length ? "" : input.slice(at);
    // The scanned records are counted in `line` already: the carried one starts there.
    tooLong(input, 0);
  };

  let read = options.scan === false ? parse : scan;
  const rowsOf = (input: string, final: boolean): SourceRow[] => {
    const out: SourceRow[] = [];
    read(input, final, out);
    const last = out[out.length - 1];
    if (final && last && input.length > 0 && !input.endsWith(breakChar)) last.open = true;
    return out;
  };

  for (;;) {
    const next = await iterator.next();
    const final = next.done === true;
    let chunk = final ? "" : next.value;
    if (!newline) {
      if (!final && !/[\r\n]/.test(chunk) && carry.length < 1 << 20) {
        carry += chunk;
        continue;
      }
      chunk = carry + chunk;
      carry = "";
      newline = guessNewline(chunk);
      breakChar = newline === "\r" ? "\r" : "\n";
      parser = new Papa.Parser({ delimiter: options.delimiter, quoteChar: options.enclosure, newline, header: false, dynamicTyping: false });
      syntax = { delimiter: options.delimiter, enclosure: options.enclosure, newline };
      if (!scannable(syntax)) read = parse;
    }
    if (toSkip > 0) {
      chunk = carry + chunk;
      carry = "";
      while (toSkip > 0) {
        const at = chunk.indexOf(breakChar);
        if (at === -1) break;
        chunk = chunk.slice(at + 1);
        toSkip--;
        line++;
      }
      if (toSkip > 0) {
        if (final) return;
        continue;
      }
    }
    const rows = rowsOf(carry + chunk, final);
    if (rows.length) yield rows;
    if (final) return;
  }
}
