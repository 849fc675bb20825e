import Papa from "papaparse";
import type { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";

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
 * Rows of a CSV body as arrays of text, streamed with backpressure. No
 * dynamic typing: identifiers such as `0700` stay text. The BOM is dropped.
 */
export async function* csvRows(source: Readable, what = "a CSV from the service"): AsyncGenerator<string[]> {
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, { header: false, skipEmptyLines: true });
  source.on("error", (err) => parser.destroy(err));
  source.pipe(parser);
  let first = true;
  const rows = (parser as AsyncIterable<string[]>)[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<string[]>;
      try {
        next = await rows.next();
      } catch (raw) {
        throw readError(raw, what);
      }
      if (next.done) return;
      const row = next.value;
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
    await rows.return?.();
  }
}

/** Records keyed by the header row's names; a short row gets empty fields. */
export async function* csvRecords(source: Readable, what?: string): AsyncGenerator<Record<string, string>> {
  let header: string[] | undefined;
  for await (const row of csvRows(source, what)) {
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
