import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCsv } from "../../src/formats/csv-parse.js";
import { CsvRecord, IRREGULAR, RecordScanner, type CsvSyntax } from "../../src/formats/csv-record.js";
import type { SourceRow } from "../../src/formats/index.js";

/** What a reader's consumers see of a row: its line, cells, parse problem and whether the file ends inside it. */
interface Seen {
  line: number;
  raw: unknown;
  error?: string;
  open?: boolean;
}

async function* pieces(chunks: readonly string[]): AsyncGenerator<string> {
  for (const chunk of chunks) yield chunk;
}

async function read(chunks: readonly string[], syntax: { delimiter: string; enclosure: string }, scan: boolean, skipLines = 0): Promise<Seen[]> {
  const seen: Seen[] = [];
  for await (const batch of parseCsv(pieces(chunks), { ...syntax, skipLines, scan })) {
    for (const row of batch) {
      const out: Seen = { line: row.line, raw: row.raw };
      if (row.error !== undefined) out.error = row.error;
      if (row.open) out.open = true;
      seen.push(out);
    }
  }
  return seen;
}

/** The text cut at the given places (sorted, deduplicated, within the text). */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out.filter((c) => c !== "");
}

const SYNTAXES = [
  { delimiter: ",", enclosure: '"' },
  { delimiter: ";", enclosure: "'" },
  { delimiter: "\t", enclosure: '"' },
] as const;

/** Text made mostly of what makes CSV hard: delimiters, enclosures, line breaks of every kind. */
function csvText(syntax: { delimiter: string; enclosure: string }): fc.Arbitrary<string> {
  const { delimiter: d, enclosure: q } = syntax;
  const atoms = fc.constantFrom("a", "b", "é", "\uFFFD", " ", d, q, q + q, "\n", "\r\n", "\r", `${q}x${q}`, `${q}x${d}y${q}`, `${q}x\ny${q}`, `${q}a${q}${q}b${q}`);
  return fc.array(atoms, { maxLength: 60 }).map((parts) => parts.join(""));
}

/** Well-formed CSV with every field enclosed or not at random: what real feeds look like. */
function regularText(syntax: { delimiter: string; enclosure: string }): fc.Arbitrary<string> {
  const { delimiter: d, enclosure: q } = syntax;
  const value = fc.string({ unit: fc.constantFrom("a", "1", " ", d, q, "\n", "\r", "é"), maxLength: 6 });
  const field = fc.tuple(value, fc.boolean()).map(([v, enclose]) => (enclose || v.includes(q) || v.includes(d) || /[\r\n]/.test(v) ? q + v.replaceAll(q, q + q) + q : v));
  const record = fc.array(field, { minLength: 1, maxLength: 5 }).map((cells) => cells.join(d));
  return fc.tuple(fc.array(record, { maxLength: 8 }), fc.constantFrom("\n", "\r\n", "\r"), fc.boolean()).map(([records, br, trailing]) => records.join(br) + (trailing ? br : ""));
}

describe("the CSV record scanner", () => {
  for (const syntax of SYNTAXES) {
    const name = `${JSON.stringify(syntax.delimiter)} and ${JSON.stringify(syntax.enclosure)}`;

    it(`reads every text as papaparse alone does, in any chunking (${name})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(csvText(syntax), regularText(syntax)), fc.array(fc.nat(200), { maxLength: 6 }), fc.nat(2), async (text, at, skip) => {
          const chunks = cut(text, at);
          expect(await read(chunks, syntax, true, skip)).toEqual(await read(chunks, syntax, false, skip));
        }),
        { numRuns: 1500 },
      );
    });

    it(`gives each cell alone, and its width, as the record's cells give them (${name})`, () => {
      fc.assert(
        fc.property(regularText(syntax), (text) => {
          const full: CsvSyntax = { ...syntax, newline: "\n" };
          const first = text.split(/\r\n|\r|\n/)[0] ?? "";
          const end = new RecordScanner(first, true, full).end(0);
          if (end === IRREGULAR) return;
          const record = new CsvRecord(1, first.slice(0, end), full);
          const lone = [0, 1, 2, 3, 4, 5].map((i) => record.cell(i));
          const cells = new CsvRecord(1, first.slice(0, end), full).raw;
          expect(lone).toEqual([0, 1, 2, 3, 4, 5].map((i) => cells[i]));
          // The width asked first (the mapper's width check), then the cells read one by one from where each starts.
          const counted = new CsvRecord(1, first.slice(0, end), full);
          expect(counted.width).toBe(cells.length);
          expect([0, 1, 2, 3, 4, 5].map((i) => counted.cell(i))).toEqual([0, 1, 2, 3, 4, 5].map((i) => cells[i]));
          expect(counted.raw).toEqual(cells);
          // The cells' starts as the scanner found them, the way the reader builds its records.
          for (const keepStarts of [true, false]) {
            const scanner = new RecordScanner(first, true, full, keepStarts);
            const scanned = new CsvRecord(1, first.slice(0, scanner.end(0)), full, undefined, scanner);
            expect(scanned.width).toBe(cells.length);
            expect([-1, 0, 1, 2, 3, 4, 5].map((i) => scanned.cell(i))).toEqual([-1, 0, 1, 2, 3, 4, 5].map((i) => cells[i]));
          }
        }),
        { numRuns: 500 },
      );
    });
  }

  it("reads the cells of every record of a piece whose cells outgrow the scanner's first array", async () => {
    const records = Array.from({ length: 1500 }, (_, r) => [`${r}`, `"q${r},x"`, "", `"a""b"`, "tail"].join(","));
    const wide = Array.from({ length: 5000 }, (_, c) => (c % 2 ? `"${c}"` : `${c}`)).join(",");
    const text = [...records.slice(0, 700), wide, ...records.slice(700)].join("\n") + "\n";
    const syntax = { delimiter: ",", enclosure: '"' };
    const expected = (await read([text], syntax, false)).map((r) => r.raw);
    // With the starts the scanner keeps, and with those found when a cell is read (a diff run's reader).
    for (const cellsOnDemand of [false, true]) {
      const cellsByCell: unknown[] = [];
      for await (const batch of parseCsv(pieces([text]), { ...syntax, skipLines: 0, cellsOnDemand })) {
        for (const row of batch) {
          expect(row).toBeInstanceOf(CsvRecord);
          const record = row as CsvRecord;
          cellsByCell.push(Array.from({ length: record.width }, (_, i) => record.cell(i)));
        }
      }
      expect(cellsByCell).toEqual(expected);
    }
  });

  it("keeps the text of regular records and leaves an irregular one and the rest of its chunk to papaparse", async () => {
    const rows = await read(['"id","name"\n"1","plain"\n"2",5" screen\n"3","after"\n', '"4","next chunk"\n'], { delimiter: ",", enclosure: '"' }, true);
    expect(rows.map((r) => r.raw)).toEqual([["id", "name"], ["1", "plain"], ["2", '5" screen'], ["3", "after"], ["4", "next chunk"]]);
    const batches: SourceRow[] = [];
    for await (const batch of parseCsv(pieces(['"1","plain"\n"2",5" screen\n"3","after"\n', '"4","next chunk"\n']), { delimiter: ",", enclosure: '"', skipLines: 0 })) batches.push(...batch);
    expect(batches.map((r) => (r instanceof CsvRecord ? r.text : "?"))).toEqual(['"1","plain"', undefined, undefined, '"4","next chunk"']);
  });

  it("counts the lines a quoted line break spans, across chunks", async () => {
    const rows = await read(['a,b\n"x\n', 'y",z\r\nw\n\n"last"'], { delimiter: ",", enclosure: '"' }, true);
    expect(rows).toEqual([
      { line: 1, raw: ["a", "b"] },
      { line: 2, raw: ["x\ny", "z\r"] },
      { line: 4, raw: ["w"] },
      { line: 6, raw: ["last"], open: true },
    ]);
  });

  it("reads a file whose delimiter is its enclosure with papaparse", async () => {
    const text = ['"a""b"\n', "c,d\n"];
    expect(await read(text, { delimiter: '"', enclosure: '"' }, true)).toEqual(await read(text, { delimiter: '"', enclosure: '"' }, false));
  });
});
