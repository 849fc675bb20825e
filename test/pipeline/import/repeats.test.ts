import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RepeatFinder } from "../../../src/pipeline/import/repeats.js";

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

  it("close() after a failed run leaves no files behind", () => {
    const dir = folder();
    const finder = new RepeatFinder(dir, 10);
    for (const id of distinct(200_000)) finder.note(id);
    expect(existsSync(dir)).toBe(true);
    finder.close();
    expect(existsSync(dir)).toBe(false);
  });
});
