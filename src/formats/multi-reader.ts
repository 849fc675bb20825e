import { ConveyorError } from "../errors.js";
import { checkAbort } from "./batches.js";
import type { RecordReader, SourceRow } from "./types.js";

/** Formats whose accessors are column positions: every entry must have the same columns in the same order. */
const POSITIONAL = new Set(["csv", "bulk", "xlsx"]);

/**
 * Reads several zip entries as one feed: accessors are built on the first entry, so the others
 * must have the same columns; each row says which entry it came from.
 */
export async function chainReaders(
  names: string[],
  openers: Array<() => Promise<RecordReader>>,
  closeAll: () => void,
): Promise<RecordReader> {
  const [openFirst] = openers;
  if (!openFirst) throw new ConveyorError("file_missing", "The zip archive holds no file to read");
  const first = await openFirst();
  if (openers.length === 1) {
    return {
      format: first.format,
      bulkFile: first.bulkFile,
      columns: () => first.columns(),
      accessor: (ref) => first.accessor(ref),
      batches: (signal) => first.batches(signal),
      close: async () => {
        await first.close();
        closeAll();
      },
    };
  }
  const columns = await first.columns();
  let current: RecordReader | null = first;

  async function* batches(signal?: AbortSignal): AsyncGenerator<readonly SourceRow[]> {
    for (let i = 0; i < openers.length; i++) {
      checkAbort(signal);
      const entry = names[i] ?? "";
      const opener = openers[i];
      const reader: RecordReader | null = i === 0 ? first : opener ? await opener() : null;
      if (!reader) continue;
      current = reader;
      if (i > 0 && POSITIONAL.has(first.format)) {
        const own = await reader.columns();
        if (JSON.stringify(own) !== JSON.stringify(columns)) {
          await reader.close();
          throw new ConveyorError(
            "header_mismatch",
            `Entry ${entry} of the zip archive has other columns than ${names[0] ?? ""}: ${(own ?? []).join(", ")}`,
            { details: { entry, columns: own, expected: columns }, hint: "Send entries with the same header, or narrow `name` to one entry." },
          );
        }
      }
      for await (const batch of reader.batches(signal)) {
        for (const row of batch) row.entry = entry;
        yield batch;
      }
      await reader.close();
      current = null;
    }
  }

  return {
    format: first.format,
    bulkFile: first.bulkFile,
    columns: async () => columns,
    accessor: (ref) => first.accessor(ref),
    batches,
    close: async () => {
      await current?.close();
      closeAll();
    },
  };
}
