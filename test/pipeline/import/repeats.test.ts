import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RepeatFinder } from "../../../src/pipeline/import/repeats.js";
import { SourceIndex } from "../../../src/pipeline/import/source-index.js";

function folder(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), "conveyor-repeats-")), "repeats");
}

/** Notes every identifier; true when one was found at once or by finish(). */
function scan(finder: RepeatFinder, ids: Iterable<string>): { early: number | null; found: boolean } {
  let at = 0;
  for (const id of ids) {
    if (finder.note(id)) return { early: at, found: true };
    at++;
  }
  return { early: null, found: finder.finish() };
}

function* distinct(n: number, prefix = "SKU-"): Generator<string> {
  for (let i = 0; i < n; i++) yield `${prefix}${String(i).padStart(7, "0")}`;
}

/** A diff run's source index of a snapshot holding `ids`. */
async function indexOf(ids: Iterable<string>): Promise<SourceIndex> {
  const entries = [...ids].map((id) => [id, null] as const);
  return SourceIndex.fromPages([entries], entries.length, () => false);
}

describe("RepeatFinder", () => {
  it("finds a repeat at once while the identifiers fit its memory", () => {
    const finder = new RepeatFinder(folder(), 100);
    expect(scan(finder, ["A", "B", "C", "B"])).toEqual({ early: 3, found: true });
  });

  it("passes a feed of distinct identifiers far past its memory, and removes its files", () => {
    const dir = folder();
    const finder = new RepeatFinder(dir, 1000);
    expect(scan(finder, distinct(300_000))).toEqual({ early: null, found: false });
    expect(finder.spilledCount).toBe(299_000);
    expect(existsSync(dir)).toBe(false);
  });

  it("finds a late identifier repeating an early one at once, by its memory", () => {
    const finder = new RepeatFinder(folder(), 1000);
    const ids = [...distinct(5000), "SKU-0000010"];
    expect(scan(finder, ids)).toEqual({ early: 5000, found: true });
  });

  it("finds two late identifiers repeating each other only at the end, through the bucket files", () => {
    const dir = folder();
    const finder = new RepeatFinder(dir, 1000);
    const ids = [...distinct(200_000), "SKU-0150000"];
    let early = false;
    for (const id of ids) early ||= finder.note(id);
    expect(early).toBe(false);
    expect(readdirSync(dir).length).toBeGreaterThan(0);
    expect(finder.finish()).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  it("sorts every bucket in one buffer: memory past the notes stays one bucket's size, not the feed's", () => {
    const finder = new RepeatFinder(folder(), 10);
    // 64 buckets of about 10,000 hashes (80 KB) each: 5 MB in all.
    for (const id of distinct(640_000)) finder.note(id);
    const before = process.memoryUsage().arrayBuffers;
    expect(finder.finish()).toBe(false);
    // A buffer per bucket stays allocated until a collection: 5 MB here.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1 << 20);
  });

  it("notes the identifiers a source index holds on its entries, so that its own memory keeps only the others", async () => {
    const dir = folder();
    const finder = new RepeatFinder(dir, 1000);
    finder.useMarks(await indexOf(distinct(50_000)));
    // 50,000 the index holds and 500 it does not: nothing past the finder's memory, and no repeat.
    expect(scan(finder, [...distinct(50_000), ...distinct(500, "NEW-")])).toEqual({ early: null, found: false });
    expect(finder.spilledCount).toBe(0);
    expect(existsSync(dir)).toBe(false);

    for (const [ids, early] of [
      [[...distinct(2000), "SKU-0001500"], 2000],
      [[...distinct(2000), ...distinct(10, "NEW-"), "NEW-0000003"], 2010],
    ] as const) {
      const again = new RepeatFinder(folder(), 1000);
      again.useMarks(await indexOf(distinct(50_000)));
      expect(scan(again, ids)).toEqual({ early, found: true });
    }
  });

  it("finds a repeat of an identifier noted before the index came, and leaves the index alone once it spilled", async () => {
    const index = await indexOf(distinct(5000));
    const finder = new RepeatFinder(folder(), 1000);
    for (const id of distinct(10)) finder.note(id);
    finder.useMarks(index);
    expect(finder.note("SKU-0000020")).toBe(false);
    expect(finder.note("SKU-0000020")).toBe(true);
    expect(finder.note("SKU-0000005")).toBe(true);

    // Past its memory it cannot be asked for what it spilled: the marks are not used, and the repeat is found at the end.
    const spilled = new RepeatFinder(folder(), 10);
    const other = await indexOf(distinct(5000));
    for (const id of distinct(100)) spilled.note(id);
    spilled.useMarks(other);
    expect(spilled.note("SKU-0000050")).toBe(false);
    expect(other.noteRow("SKU-0000050")).toBe(false);
    expect(spilled.finish()).toBe(true);
  });

  it("close() after a failed run leaves no files behind", () => {
    const dir = folder();
    const finder = new RepeatFinder(dir, 10);
    for (const id of distinct(200_000)) finder.note(id);
    expect(existsSync(dir)).toBe(true);
    finder.close();
    expect(existsSync(dir)).toBe(false);
  });
});
