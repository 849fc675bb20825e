import { ConveyorError } from "../errors.js";
import { RowBatches } from "./batches.js";
import type { Accessor, FieldRef, RecordReader, SourceRow } from "./types.js";

const MAX_LINE_CHARS = 16 * 1024 * 1024;

/** Splits text into lines (\n, \r\n or \r), numbering them; blank lines are counted but not yielded. */
export async function* splitLines(text: AsyncIterable<string>, skipLines: number): AsyncGenerator<SourceRow[]> {
  let carry = "";
  let line = 0;
  let pendingCr = false;
  for await (const chunk of text) {
    let input = carry + chunk;
    if (pendingCr && input.startsWith("\n")) input = input.slice(1);
    pendingCr = false;
    const out: SourceRow[] = [];
    let start = 0;
    for (let i = 0; i < input.length; i++) {
      const c = input.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      line++;
      if (line > skipLines && i > start) out.push({ line, raw: input.slice(start, i) });
      if (c === 13) {
        if (i + 1 < input.length) {
          if (input.charCodeAt(i + 1) === 10) i++;
        } else pendingCr = true;
      }
      start = i + 1;
    }
    carry = input.slice(start);
    if (carry.length > MAX_LINE_CHARS) {
      throw new ConveyorError("file_format", `Line ${line + 1} is longer than 16 MB: the file has no line breaks a fixed-width file needs`);
    }
    if (out.length) yield out;
  }
  line++;
  if (carry && line > skipLines) yield [{ line, raw: carry }];
}

/** Fixed width: a record is one line, fields are [start, end) character offsets into it. */
export function openFixedReader(
  text: AsyncIterable<string>,
  skipLines: number,
  onClose: () => Promise<void> = async () => {},
): RecordReader {
  const batches = new RowBatches(splitLines(text, skipLines));
  return {
    format: "fixed",
    bulkFile: false,
    columns: async () => null,
    accessor: (ref: FieldRef): Accessor => {
      if (!Array.isArray(ref)) {
        throw new ConveyorError(
          "definition_invalid",
          `field_map value ${JSON.stringify(ref)} is a name, but a fixed-width file has no columns: use [start, end] offsets`,
          { hint: 'Write the field as a pair of character offsets, start included and end excluded: "sku": [0, 12].' },
        );
      }
      const [start, end] = ref;
      if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start) {
        throw new ConveyorError("definition_invalid", `field_map offsets [${start}, ${end}] are not a valid [start, end) range`, {
          hint: "Use whole numbers with 0 <= start < end.",
        });
      }
      return (row) => {
        const raw = row.raw as string;
        return raw.length <= start ? undefined : raw.slice(start, end).trim();
      };
    },
    batches: (signal) => batches.batches(signal),
    close: async () => {
      await batches.close();
      await onClose();
    },
  };
}
