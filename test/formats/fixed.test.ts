import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader } from "../../src/formats/index.js";
import { allRows, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("fixed-width reader", () => {
  it("slices [start, end) offsets of each line, trims padding and numbers lines", async () => {
    const path = await dir.write("fixed.txt", "HEADER LINE\r\n0000700   Widget    0012\r\n\r\n0000701   Gadget    0003\rshort\n");
    const reader = await openReader(path, { format: "fixed", skip_lines: 1 });
    expect(reader.format).toBe("fixed");
    expect(await reader.columns()).toBeNull();
    const sku = reader.accessor([0, 10]);
    const name = reader.accessor([10, 20]);
    const qty = reader.accessor([20, 24]);
    const rows = await allRows(reader);
    expect(rows.map((r) => [r.line, sku?.(r), name?.(r), qty?.(r)])).toEqual([
      [2, "0000700", "Widget", "0012"],
      [4, "0000701", "Gadget", "0003"],
      [5, "short", undefined, undefined],
    ]);
  });

  it("refuses names and bad ranges for fixed width, and offsets for CSV", async () => {
    const path = await dir.write("f.txt", "abc\n");
    const reader = await openReader(path, { format: "fixed" });
    expect(() => reader.accessor("sku")).toThrow(/offsets/);
    expect(() => reader.accessor([5, 2])).toThrow(/not a valid/);
    await reader.close();
    const csv = await dir.write("c.csv", "a\n1\n");
    const csvReader = await openReader(csv, {});
    expect(() => csvReader.accessor([0, 2])).toThrow(/fixed-width/);
    await csvReader.close();
  });
});
