/**
 * CSV records as the file spells them (issue 28). A diff run recognises an
 * unchanged record by the hash of its text and reads only its identifier
 * cell, so the scanner here finds where each record ends and checks that it
 * is regular, without cutting it into cells; a record is cut only when
 * something asks for its cells.
 *
 * Regular means every field is either unquoted and free of the enclosure, or
 * enclosed, with doubled enclosures inside and a delimiter or the line break
 * right after the closing one. For such a record the cells are a function of
 * its text alone, and papaparse reads the same cells from it. Anything else
 * (a stray quote, spaces after a closing one, an enclosure never closed) is
 * left to papaparse, whose reading of odd files the scanner does not imitate.
 *
 * @module
 */

import type { SourceRow } from "./types.js";

/** How a file spells its records: one character each for delimiter and enclosure, and its line break. */
export interface CsvSyntax {
  readonly delimiter: string;
  readonly enclosure: string;
  readonly newline: string;
}

/** Flags of a cell's word in RecordScanner.cellStarts: the cell is enclosed; it holds doubled enclosures. */
const ENCLOSED = 1;
const DOUBLED = 2;

/** Cell starts an array of RecordScanner.cellStarts holds: a piece of text's records, most often. */
const STARTS_PER_ARRAY = 4096;
const NO_STARTS = new Int32Array(0);

/** The scanner cannot tell yet: the record runs past the text at hand. */
export const INCOMPLETE = -1;
/** The record is not regular: papaparse reads it. */
export const IRREGULAR = -2;

/** Whether the scanner can read a file of this syntax at all: two equal characters leave every quote ambiguous. */
export function scannable(syntax: CsvSyntax): boolean {
  return syntax.delimiter !== syntax.enclosure;
}

/**
 * Finds the records of one piece of text. The next enclosure and delimiter
 * are remembered across records: searched afresh from each record, a file
 * with no quotes (or one column) would have the rest of the piece searched
 * once per record.
 */
export class RecordScanner {
  private quote = -2;
  private comma = -2;
  /**
   * Where each cell of the records found starts, from its record's start,
   * as `offset << 2 | ENCLOSED | DOUBLED` (cellAtWord reads them): the scan
   * passes every cell boundary anyway, and a mapped row's width check and
   * cells then need no second pass over the record, nor a search for
   * doubled enclosures. Records of one scanner share the array; a fuller
   * one is started when it fills. Kept only when `keepStarts`: a diff run
   * reads most records by their text alone, and would pay for every start.
   */
  cellStarts = NO_STARTS;
  /** The last record found: its first entry in `cellStarts`, and its number of cells. */
  first = 0;
  width = 0;
  private used = 0;

  constructor(
    private readonly text: string,
    private readonly final: boolean,
    private readonly syntax: CsvSyntax,
    readonly keepStarts = true,
  ) {}

  /**
   * Where the record starting at `start` ends (the index of its line break,
   * or the text's length when `final` and the file ends without one),
   * INCOMPLETE, or IRREGULAR. A record found leaves its cells' starts in
   * `cellStarts` from `first`, `width` of them.
   */
  end(start: number): number {
    this.first = this.used;
    const end = this.scan(start);
    if (end < 0) this.used = this.first;
    else this.width = this.used - this.first;
    return end;
  }

  private cellAt(word: number): void {
    if (!this.keepStarts) return;
    if (this.used === this.cellStarts.length) {
      // The record under way moves to the front of a fresh array; the records before keep the old one.
      const grown = new Int32Array(Math.max(STARTS_PER_ARRAY, 2 * (this.used - this.first) + 16));
      grown.set(this.cellStarts.subarray(this.first, this.used));
      this.used -= this.first;
      this.first = 0;
      this.cellStarts = grown;
    }
    this.cellStarts[this.used++] = word;
  }

  private scan(start: number): number {
    const { text, final } = this;
    const { delimiter, enclosure, newline } = this.syntax;
    const enclosureCode = enclosure.charCodeAt(0);
    const length = text.length;
    let pos = start;
    // The next line break at or after pos, searched again only once pos passes it.
    let lineBreak = text.indexOf(newline, pos);
    for (;;) {
      // The first enclosure at or after pos is pos itself: no search for it.
      if (text.charCodeAt(pos) === enclosureCode) {
        let at = pos + 1;
        let close: number;
        let flags = ENCLOSED;
        for (;;) {
          close = text.indexOf(enclosure, at);
          if (close === -1) return final ? IRREGULAR : INCOMPLETE;
          if (close + 1 === length) {
            this.cellAt(((pos - start) << 2) | flags);
            return final ? length : INCOMPLETE;
          }
          if (text[close + 1] !== enclosure) break;
          flags = ENCLOSED | DOUBLED;
          at = close + 2;
        }
        this.cellAt(((pos - start) << 2) | flags);
        const after = close + 1;
        if (text[after] === delimiter) {
          pos = after + 1;
        } else if (text.startsWith(newline, after)) {
          return after;
        } else if (!final && newline.startsWith(text.slice(after))) {
          return INCOMPLETE;
        } else {
          return IRREGULAR;
        }
        if (lineBreak !== -1 && lineBreak < pos) lineBreak = text.indexOf(newline, pos);
        continue;
      }
      this.cellAt((pos - start) << 2);
      const quote = this.nextQuote(pos);
      const comma = this.nextComma(pos);
      const fieldEnd = comma !== -1 && (lineBreak === -1 || comma < lineBreak) ? comma : lineBreak;
      if (fieldEnd === -1) {
        if (!final) return INCOMPLETE;
        return quote === -1 ? length : IRREGULAR;
      }
      if (quote !== -1 && quote < fieldEnd) return IRREGULAR;
      if (fieldEnd === lineBreak) return lineBreak;
      pos = fieldEnd + 1;
    }
  }

  /** The first enclosure at or after `pos` (-1: none), given that pos never goes back. */
  private nextQuote(pos: number): number {
    if (this.quote !== -1 && this.quote < pos) this.quote = this.text.indexOf(this.syntax.enclosure, pos);
    return this.quote;
  }

  private nextComma(pos: number): number {
    if (this.comma !== -1 && this.comma < pos) this.comma = this.text.indexOf(this.syntax.delimiter, pos);
    return this.comma;
  }
}

/** The cells of a regular record's text. */
export function splitRecord(text: string, syntax: CsvSyntax): string[] {
  const cells: string[] = [];
  let pos = 0;
  for (;;) {
    const next = skipCell(text, pos, syntax);
    cells.push(cellBetween(text, pos, next, syntax));
    if (next === -1) return cells;
    pos = next;
  }
}

/** Cell `index` of a regular record's text, without cutting the others out. */
export function cellOf(text: string, index: number, syntax: CsvSyntax): string | undefined {
  let pos = 0;
  for (let i = 0; i < index; i++) {
    const next = skipCell(text, pos, syntax);
    if (next === -1) return undefined;
    pos = next;
  }
  return cellBetween(text, pos, skipCell(text, pos, syntax), syntax);
}

/**
 * Where each cell of a regular record's text starts, without cutting one
 * out, as the scanner's words: an enclosed cell is marked as one that may
 * hold doubled enclosures, which its cut then looks for.
 */
export function cellStarts(text: string, syntax: CsvSyntax): number[] {
  const word = (pos: number): number => (pos << 2) | (text[pos] === syntax.enclosure ? ENCLOSED | DOUBLED : 0);
  const starts = [word(0)];
  for (let pos = skipCell(text, 0, syntax); pos !== -1; pos = skipCell(text, pos, syntax)) starts.push(word(pos));
  return starts;
}

/** The value of the cell of word `word` (cellStarts), whose next one has word `next` (-1 after the last). */
function cellAtWord(text: string, word: number, next: number, enclosure: string): string {
  const pos = word >> 2;
  const end = next === -1 ? text.length : (next >> 2) - 1;
  if ((word & ENCLOSED) === 0) return text.slice(pos, end);
  const cell = text.slice(pos + 1, end - 1);
  return (word & DOUBLED) === 0 ? cell : cell.replaceAll(enclosure + enclosure, enclosure);
}

/** The value of the cell starting at `pos`, whose next one starts at `next` (-1 after the last). */
function cellBetween(text: string, pos: number, next: number, syntax: CsvSyntax): string {
  const end = next === -1 ? text.length : next - 1;
  if (text[pos] !== syntax.enclosure) return text.slice(pos, end);
  const { enclosure } = syntax;
  const cell = text.slice(pos + 1, end - 1);
  return cell.includes(enclosure) ? cell.replaceAll(enclosure + enclosure, enclosure) : cell;
}

function skipCell(text: string, pos: number, syntax: CsvSyntax): number {
  if (text[pos] === syntax.enclosure) {
    const close = closingAt(text, pos, syntax.enclosure);
    return close + 1 < text.length ? close + 2 : -1;
  }
  const comma = text.indexOf(syntax.delimiter, pos);
  return comma === -1 ? -1 : comma + 1;
}

/** The closing enclosure of the enclosed field opening at `open` (the record is regular: there is one). */
function closingAt(text: string, open: number, enclosure: string): number {
  let close = text.indexOf(enclosure, open + 1);
  while (close !== -1 && text[close + 1] === enclosure) close = text.indexOf(enclosure, close + 2);
  return close === -1 ? text.length : close;
}

/**
 * A regular record: its text, and its cells once something reads them. The
 * rows papaparse read (the irregular ones and what follows them in their
 * piece of the file) come with their cells and no text.
 */
export class CsvRecord implements SourceRow {
  error?: string;
  open?: boolean;
  entry?: string;
  private cells: string[] | undefined;
  /** Where each cell starts, from `first`, `count` of them: the scanner's (RecordScanner.cellStarts), or cellStarts' once asked. */
  private starts: Int32Array | number[] | undefined;
  private first = 0;
  private count = 0;

  constructor(
    public line: number,
    /** The record as the file spells it, line break excluded; undefined for a row papaparse read. */
    readonly text: string | undefined,
    private readonly syntax: CsvSyntax,
    cells?: string[],
    scanned?: RecordScanner,
  ) {
    this.cells = cells;
    if (scanned?.keepStarts === true) {
      this.starts = scanned.cellStarts;
      this.first = scanned.first;
      this.count = scanned.width;
    }
  }

  get raw(): string[] {
    this.cells ??= splitRecord(this.text ?? "", this.syntax);
    return this.cells;
  }

  /** How many cells the record has: the width check of every mapped row, which then reads only the mapped cells. */
  get width(): number {
    if (this.cells !== undefined || this.text === undefined) return this.raw.length;
    if (this.starts === undefined) {
      this.starts = cellStarts(this.text, this.syntax);
      this.count = this.starts.length;
    }
    return this.count;
  }

  /** Cell `index`, cutting out only that one while the record's cells are not needed. */
  cell(index: number): string | undefined {
    if (this.cells !== undefined || this.text === undefined) return this.raw[index];
    const starts = this.starts;
    if (starts === undefined) return cellOf(this.text, index, this.syntax);
    if (index < 0 || index >= this.count) return undefined;
    const at = this.first + index;
    return cellAtWord(this.text, starts[at] ?? 0, index + 1 < this.count ? (starts[at + 1] ?? -1) : -1, this.syntax.enclosure);
  }
}
