import { FileSink } from "./sink.js";
import type { RecordWriter } from "./types.js";

/** Quotes only when it must: the delimiter, the enclosure, a line break, or spaces at either end (which some readers trim). */
export function csvField(value: string, delimiter: string, enclosure: string): string {
  const key = delimiter + enclosure;
  let quote = quotings.get(key);
  if (!quote) quotings.set(key, (quote = quoting(delimiter, enclosure)));
  return quote(value);
}

const quotings = new Map<string, (value: string) => string>();

const escapeClass = (c: string): string => c.replace(/[\\\]^-]/g, "\\$&");

/**
 * The quoting of one delimiter and enclosure, decided by one regular
 * expression test instead of five scans and a trim: a million-row export
 * quotes millions of cells. `\s` and `String.prototype.trim` share one
 * definition of white space.
 */
function quoting(delimiter: string, enclosure: string): (value: string) => string {
  const needs = new RegExp(`[${escapeClass(delimiter)}${escapeClass(enclosure)}\\r\\n]|^\\s|\\s$`);
  const doubled = enclosure + enclosure;
  return (value) => (value !== "" && needs.test(value) ? enclosure + value.split(enclosure).join(doubled) + enclosure : value);
}

/** RFC 4180 line breaks; values keep their own line breaks inside quotes. */
const EOL = "\r\n";

/** One CSV line of values, line break included: the writer's, and the export's render thread's. */
export function csvLine(delimiter: string, enclosure: string): (values: readonly string[]) => string {
  const field = quoting(delimiter, enclosure);
  return (values) => {
    let text = "";
    for (let i = 0; i < values.length; i++) text += (i === 0 ? "" : delimiter) + field(values[i] ?? "");
    return text + EOL;
  };
}

export async function openCsvWriter(localPath: string, columns: string[], delimiter: string, enclosure: string): Promise<RecordWriter> {
  const sink = await FileSink.open(localPath);
  const line = csvLine(delimiter, enclosure);
  await sink.write(line(columns));
  let rows = 0;
  return {
    write: async (record) => {
      rows++;
      await sink.write(line(columns.map((c) => record[c] ?? "")));
    },
    // A batch is one string and one sink write: a promise per row was a tenth of an export's own time.
    writeRows: async (batch) => {
      let text = "";
      for (const values of batch) text += line(values);
      rows += batch.length;
      if (text) await sink.write(text);
    },
    close: async () => ({ rows, bytes: await sink.close() }),
  };
}

function ordered(columns: string[], record: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of columns) out[c] = record[c] ?? "";
  return out;
}

/** A JSON array written record by record: `[`, records separated by `,`, `]`. */
export async function openJsonWriter(localPath: string, columns: string[], lines: boolean): Promise<RecordWriter> {
  const sink = await FileSink.open(localPath);
  let rows = 0;
  return {
    write: async (record) => {
      const json = JSON.stringify(ordered(columns, record));
      await sink.write(lines ? `${json}\n` : `${rows === 0 ? "[\n" : ",\n"}${json}`);
      rows++;
    },
    close: async () => {
      if (!lines) await sink.write(rows === 0 ? "[]\n" : "\n]\n");
      return { rows, bytes: await sink.close() };
    },
  };
}
