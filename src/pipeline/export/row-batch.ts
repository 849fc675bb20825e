/**
 * A batch of export rows as the render thread receives it: one string and
 * one array of lengths. Posting thousands of small strings to a thread costs
 * about as much as rendering them; two blocks cost almost nothing. Values
 * are cut by their lengths, never by a separator, so a value holding any
 * character (the separator included) comes out as it went in.
 *
 * @module
 */

/** Between the identifier and the values, and between values: the same unit separator `rowHash` joins with. */
const US = "\u001f";

export interface RowBatch {
  /** Per row: the identifier, then the values, all joined by US; a row's values part is what `rowHash` hashes. */
  text: string;
  /** Per row: the number of values, the identifier's length, then each value's length. */
  lengths: Int32Array<ArrayBuffer>;
  rows: number;
  /** The rows' hashes joined by "\n" when the main thread has them already (a diff run); "" when the thread computes them. */
  hashes: string;
}

export interface BatchRow {
  key: string;
  values: readonly string[];
}

export function encodeRows(rows: readonly BatchRow[], hashes: readonly string[] | null): RowBatch {
  let lengths = new Int32Array(rows.length * ((rows[0]?.values.length ?? 0) + 2));
  let k = 0;
  let text = "";
  for (const [r, row] of rows.entries()) {
    const values = row.values;
    if (k + values.length + 2 > lengths.length) lengths = grown(lengths, values.length + 2);
    lengths[k++] = values.length;
    lengths[k++] = row.key.length;
    for (const value of values) lengths[k++] = value.length;
    // Concatenated, not pushed and joined: the string is flattened once, when it is posted.
    text += (r === 0 ? "" : US) + row.key + US + values.join(US);
  }
  return { text, lengths: lengths.subarray(0, k), rows: rows.length, hashes: hashes ? hashes.join("\n") : "" };
}

function grown(lengths: Int32Array<ArrayBuffer>, more: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(lengths.length * 2 + more);
  next.set(lengths);
  return next;
}

/** Calls `each` with every row of a batch, in order: its index, identifier, values, and values joined by US (what `rowHash` hashes). */
export function eachRow(batch: RowBatch, each: (index: number, key: string, values: string[], joined: string) => void): void {
  const { text, lengths } = batch;
  let at = 0;
  let k = 0;
  for (let r = 0; r < batch.rows; r++) {
    const count = lengths[k++] ?? 0;
    const keyLength = lengths[k++] ?? 0;
    const key = text.slice(at, at + keyLength);
    at += keyLength + 1;
    const start = at;
    const values: string[] = new Array<string>(count);
    for (let v = 0; v < count; v++) {
      const length = lengths[k++] ?? 0;
      values[v] = text.slice(at, at + length);
      at += length + 1;
    }
    // A row of no values still had its empty join and the separator after it.
    if (count === 0) at += 1;
    each(r, key, values, count === 0 ? "" : text.slice(start, at - 1));
  }
}
