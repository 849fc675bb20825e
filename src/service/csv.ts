import Papa from "papaparse";
import type { Readable } from "node:stream";

/**
 * Rows of a CSV body as arrays of text, streamed with backpressure. No
 * dynamic typing: identifiers such as `0700` stay text. The BOM is dropped.
 */
export async function* csvRows(source: Readable): AsyncGenerator<string[]> {
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, { header: false, skipEmptyLines: true });
  source.on("error", (err) => parser.destroy(err));
  source.pipe(parser);
  let first = true;
  try {
    for await (const row of parser as AsyncIterable<string[]>) {
      if (first) {
        first = false;
        if (row[0]?.startsWith("\uFEFF")) row[0] = row[0].slice(1);
      }
      yield row;
    }
  } finally {
    // The consumer may stop early: free the socket.
    source.unpipe(parser);
    if (!source.destroyed) source.destroy();
  }
}

/** Records keyed by the header row's names; a short row gets empty fields. */
export async function* csvRecords(source: Readable): AsyncGenerator<Record<string, string>> {
  let header: string[] | undefined;
  for await (const row of csvRows(source)) {
    if (!header) {
      header = row.map((name) => name.trim());
      continue;
    }
    const record: Record<string, string> = {};
    header.forEach((name, index) => {
      record[name] = row[index] ?? "";
    });
    yield record;
  }
}
