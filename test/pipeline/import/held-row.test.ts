import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { PlannerRow } from "../../../src/pipeline/import/product-planner.js";
import { heldRow } from "../../../src/pipeline/import/products.js";

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const MB = 1024 * 1024;

/** A mapped row whose values are slices of a text of its own, as a reader's rows are slices of its decoded pieces. */
function rowFrom(line: number, textChars: number): PlannerRow {
  const text = `${String(line).padStart(8, "0")},${"x".repeat(textChars)}`;
  return { identifier: text.slice(0, 20), line, values: { guid: text.slice(0, 20), title: text.slice(9, 40) }, ignored: new Set() };
}

describe("a page of planner rows", () => {
  it("keeps the rows of a dense page as they are", () => {
    const page: PlannerRow[] = [];
    for (let line = 2; line < 12; line++) {
      const row = rowFrom(line, 100);
      expect(heldRow(page, row)).toBe(row);
      page.push(row);
    }
  });

  it("holds the rows of a sparse page without the text they were cut from", () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const page: PlannerRow[] = [];
    // A changed row every hundred lines, each cut from a text of a megabyte.
    for (let i = 0; i < 100; i++) page.push(heldRow(page, rowFrom(2 + i * 100, MB)));
    gc();
    const kept = process.memoryUsage().heapUsed - before;
    // Without copies, the page would hold 99 texts of a megabyte (the first row's text is kept: one piece per page).
    expect(kept).toBeLessThan(10 * MB);
    expect(page[50]?.values).toEqual({ guid: `${String(5002).padStart(8, "0")},${"x".repeat(11)}`, title: "x".repeat(31) });
    expect(page[50]?.identifier).toBe(`${String(5002).padStart(8, "0")},${"x".repeat(11)}`);
  });
});
