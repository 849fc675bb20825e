import type { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";
import { parseCsv } from "../formats/csv-parse.js";
import { decodeText } from "../formats/decode.js";
import type { SourceRow } from "../formats/types.js";

/** A body cut off mid-file is the service's failure, worth another run; name what was being read. */
function readError(raw: unknown, what: string): ConveyorError {
  if (raw instanceof ConveyorError) return raw;
  const reason = raw instanceof Error ? raw.message : String(raw);
  return new ConveyorError("service_unavailable", `reading ${what} failed: ${reason}`, {
    retryable: true,
    cause: raw,
    details: { what },
    hint: "The download broke off; nothing read so far was applied as complete. Run again.",
  });
}

/**
 * Rows of a CSV body as arrays of text, a parsed chunk at a time, streamed
 * with backpressure, through the same pull parser as the import readers
 * (papaparse's stream mode was 20x slower on a million-row export). No
 * dynamic typing: identifiers such as `0700` stay text. The BOM is dropped.
 * Pages, not rows: an async generator step per row cost a million-row scope
 * read about a second in promise round trips.
 */
export async function* csvRowPages(source: Readable, what = "a CSV from the service"): AsyncGenerator<string[][]> {
  let first = true;
  // Every row is cut into all its cells at once (raw): the scanner need not keep where each starts.
  const pages = parseCsv(decodeText(source, { encoding: "utf-8", bomLength: 0 }), { delimiter: ",", enclosure: '"', skipLines: 0, cellsOnDemand: true });
  try {
    for (;;) {
      let next: IteratorResult<SourceRow[]>;
      try {
        next = await pages.next();
      } catch (raw) {
        throw readError(raw, what);
      }
      if (next.done) return;
      const out: string[][] = [];
      for (const row of next.value) {
        // A quote left open at the end is a body cut off mid-field.
        if (row.error) throw readError(new Error(`line ${row.line}: ${row.error}`), what);
        const cells = row.raw as string[];
        if (first) {
          first = false;
          if (cells[0]?.startsWith("\uFEFF")) cells[0] = cells[0].slice(1);
        }
        out.push(cells);
      }
      if (out.length) yield out;
    }
  } finally {
    // The consumer may stop early: free the socket.
    if (!source.destroyed) source.destroy();
    await pages.return(undefined);
  }
}

export async function* csvRows(source: Readable, what?: string): AsyncGenerator<string[]> {
  for await (const page of csvRowPages(source, what)) yield* page;
}

/** Records keyed by the header row's names, a page at a time; a short row gets empty fields. */
export async function* csvRecordPages(source: Readable, what?: string): AsyncGenerator<Array<Record<string, string>>> {
  let header: string[] | undefined;
  for await (const rows of csvRowPages(source, what)) {
    const records: Array<Record<string, string>> = [];
    for (const row of rows) {
      if (!header) {
        header = row.map((name) => name.trim());
        continue;
      }
      const record: Record<string, string> = {};
      for (let i = 0; i < header.length; i++) record[header[i] ?? ""] = row[i] ?? "";
      records.push(record);
    }
    if (records.length) yield records;
  }
}

export async function* csvRecords(source: Readable, what?: string): AsyncGenerator<Record<string, string>> {
  for await (const page of csvRecordPages(source, what)) yield* page;
}
