import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csvField } from "../../src/formats/index.js";
import { csvCell } from "../../src/pipeline/csv-cell.js";
import { csv, openHarness, type Harness } from "./harness.js";

/** A feed that repeats identifiers leaves the streaming plan for the work database's last-row-wins one. */
const HEADER = ["guid", "title", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };

function debugFile(h: Harness, runId: string, name: string): string {
  return readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");
}

describe("duplicate identifiers", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("the last row wins, in its later position; row errors are reported once; debug and live send the same", async () => {
    const rows = Array.from({ length: 8 }, (_, i) => [`P${i}`, `Part ${i}`, String(i)]);
    const text = `${csv(HEADER, rows)}P9,too,many,cells\nP3,Part 3 again,33\nP6,Part 6 again,66\nP3,Part 3 last,333\n`;
    h.writeFeed("feed-1.csv", text);
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit", error_limit: "50%" });

    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.counts).toMatchObject({ rows: 12, row_errors: 1, create: 8 });
    const errors = debugFile(h, debug.id, "errors.csv").trim().split(/\r?\n/);
    expect(errors).toHaveLength(2);
    const bulk = debugFile(h, debug.id, "bulk-1.csv").trim().split(/\r\n/);
    expect(bulk.slice(1).map((l) => l.split(",")[1])).toEqual(["P0", "P1", "P2", "P4", "P5", "P7", "P6", "P3"]);
    expect(bulk.at(-1)).toBe("add,P3,Part 3 last,333");
    const plan = debugFile(h, debug.id, "plan.csv").trim().split(/\r\n/);
    expect(plan.filter((l) => l.includes(",P3,"))).toEqual(["create,add,P3,title,,Part 3 last", "create,add,P3,stock,,333"]);
    expect(plan).toHaveLength(1 + 8 * 2);
    expect(debug.debug_files?.filter((f) => f.startsWith("bulk-"))).toEqual(["bulk-1.csv"]);

    const live = await h.run(automation);
    expect(live.counts).toMatchObject({ rows: 12, row_errors: 1, create: 8, failed: 0 });
    expect(h.items().get("P3")).toMatchObject({ title: "Part 3 last", stock: "333" });
    expect(h.items().get("P6")).toMatchObject({ stock: "66" });
    const jobs = h.bulkJobs();
    expect(jobs).toHaveLength(1);
    expect(readFileSync(jobs[0]?.upload ?? "", "utf8")).toBe(debugFile(h, debug.id, "bulk-1.csv"));

    // The snapshot holds the winning rows: the same file again is unchanged throughout.
    const again = await h.run(automation, { diff: true });
    expect(again.counts).toMatchObject({ create: 0, update: 0, unchanged: 8 });
  });
});

describe("csvCell", () => {
  it("quotes exactly as the worker's CSV writer does", () => {
    const values = ["", "plain", "a,b", 'say "hi"', "line\nbreak", "cr\r", " lead", "trail ", "\tx", "x\u00a0", "\ufeffbom", "ünï", '"', ",", "a b"];
    for (const v of values) expect(csvCell(v)).toBe(csvField(v, ",", '"'));
  });
});
