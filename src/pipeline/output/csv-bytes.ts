/**
 * CSV cells written as bytes, for text known to be ASCII: the quoting of
 * `csvCell` (quoted when the value holds a quote, a comma, a line break, or
 * starts or ends with white space; quotes doubled), byte for byte. Building
 * rows' lines as strings and encoding them cost the writer thread about
 * twice what copying their bytes does. In ASCII, the white space `\s`
 * matches is tab, line feed, vertical tab, form feed, carriage return and
 * space.
 *
 * @module
 */

const QUOTE = 34;
const COMMA = 44;
const LF = 10;
const CR = 13;

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/** The most bytes `putCell` writes for `length` bytes of value. */
export function cellBound(length: number): number {
  return 2 * length + 2;
}

/** Writes `src[start, end)` as a CSV cell into `dst` at `at`; returns where it ended. */
export function putCell(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  if (end > start && (isSpace(src[start] ?? 0) || isSpace(src[end - 1] ?? 0))) return putQuoted(src, start, end, dst, at);
  let to = at;
  for (let i = start; i < end; i++) {
    const c = src[i] ?? 0;
    // Copied as it is until a byte shows it must be quoted: then written again, quoted.
    if (c === QUOTE || c === COMMA || c === LF || c === CR) return putQuoted(src, start, end, dst, at);
    dst[to++] = c;
  }
  return to;
}

function putQuoted(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  let to = at;
  dst[to++] = QUOTE;
  for (let i = start; i < end; i++) {
    const c = src[i] ?? 0;
    dst[to++] = c;
    if (c === QUOTE) dst[to++] = QUOTE;
  }
  dst[to++] = QUOTE;
  return to;
}

/** Copies `bytes` into `dst` at `at`; returns where it ended. */
export function putBytes(bytes: Uint8Array, dst: Uint8Array, at: number): number {
  let to = at;
  for (let i = 0; i < bytes.length; i++) dst[to++] = bytes[i] ?? 0;
  return to;
}
