import { FileSink } from "./sink.js";
import type { RecordWriter } from "./types.js";

/**
 * Quotes only when it must, and always when a reader could lose something: the delimiter, the
 * enclosure, a line break, or spaces at either end (which some readers trim).
 */
export function csvField(value: string, delimiter: string, enclosure: string): string {
  if (
    value.includes(delimiter) ||
    value.includes(enclosure) ||
    value.includes("\n") ||
    value.includes("\r") ||
    (value.length > 0 && (value.trim() !== value))
  ) {
    return enclosure + value.split(enclosure).join(enclosure + enclosure) + enclosure;
  }
  return value;
}

/** RFC 4180 line breaks; values keep their own line breaks inside quotes. */
const EOL = "\r\n";

export async function openCsvWriter(localPath: string, columns: string[], delimiter: string, enclosure: string): Promise<RecordWriter> {
  const sink = await FileSink.open(localPath);
  const line = (values: string[]): string => values.map((v) => csvField(v, delimiter, enclosure)).join(delimiter) + EOL;
  await sink.write(line(columns));
  let rows = 0;
  return {
    write: async (record) => {
      rows++;
      await sink.write(line(columns.map((c) => record[c] ?? "")));
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
