import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { csvField } from "../../../src/formats/index.js";
import { csvCell } from "../../../src/pipeline/output/csv-cell.js";
import { repeatMemory } from "../../../src/pipeline/import/repeats.js";
import { SourceIndex } from "../../../src/pipeline/import/source-index.js";
import { csv, openHarness, type Harness } from "../harness.js";

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
    // P3 twice and P6 once more: three rows merged into earlier ones.
    expect(debug.counts).toMatchObject({ rows: 12, row_errors: 1, create: 8, merged: 3 });
    const errors = debugFile(h, debug.id, "errors.csv").trim().split(/\r?\n/);
    expect(errors).toHaveLength(2);
    const bulk = debugFile(h, debug.id, "bulk-1.csv").trim().split(/\r\n/);
    expect(bulk.slice(1).map((l) => l.split(",")[1])).toEqual(["P0", "P1", "P2", "P4", "P5", "P7", "P6", "P3"]);
    expect(bulk.at(-1)).toBe("add,P3,Part 3 last,333");
    const plan = debugFile(h, debug.id, "plan.csv").trim().split(/\r\n/);
    expect(plan.filter((l) => l.includes(",P3,"))).toEqual(["create,add,P3,title,,Part 3 last,new", "create,add,P3,stock,,333,new"]);
    expect(plan).toHaveLength(1 + 8 * 2);
    expect(debug.debug_files?.filter((f) => f.startsWith("bulk-"))).toEqual(["bulk-1.csv"]);

    const live = await h.run(automation);
    expect(live.counts).toMatchObject({ rows: 12, row_errors: 1, create: 8, failed: 0, merged: 3 });
    expect(h.items().get("P3")).toMatchObject({ title: "Part 3 last", stock: "333" });
    expect(h.items().get("P6")).toMatchObject({ stock: "66" });
    const jobs = h.bulkJobs();
    expect(jobs).toHaveLength(1);
    expect(readFileSync(jobs[0]?.upload ?? "", "utf8")).toBe(debugFile(h, debug.id, "bulk-1.csv"));

    // The snapshot holds the winning rows: the same file again is unchanged throughout.
    const again = await h.run(automation, { diff: true });
    expect(again.counts).toMatchObject({ create: 0, update: 0, unchanged: 8 });
  });

  it("a diff run finds a repeat of an identifier its snapshot holds, noted on the source index's entry", async () => {
    const rows = Array.from({ length: 400 }, (_, i) => [`P${i}`, `Part ${i}`, String(i)]);
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    h.writeFeed("feed-1.csv", csv(HEADER, rows));
    expect((await h.run(automation)).counts).toMatchObject({ create: 400 });
    const noted = vi.spyOn(SourceIndex.prototype, "noteRowAt");
    try {
      // P7 unchanged twice, then changed: the last row wins; P9 unchanged twice.
      h.writeFeed("feed-1.csv", csv(HEADER, [...rows, ["P7", "Part 7", "7"], ["P9", "Part 9", "9"], ["P7", "Part 7 last", "77"]]));
      const diff = await h.run(automation, { diff: true });
      expect(diff.counts).toMatchObject({ rows: 403, merged: 3, create: 0, update: 1, unchanged: 399 });
      expect(h.items().get("P7")).toMatchObject({ title: "Part 7 last", stock: "77" });
      // The repeat was found on the index's entries, by the slot the settling found, not by the finder's own memory.
      expect(noted.mock.results.filter((r) => r.value === true).length).toBeGreaterThan(0);
    } finally {
      noted.mockRestore();
    }
  });

  it("past the memory of the repeat finder: a late repeat is found at the end, odd identifiers survive the bulk files", async () => {
    const held = repeatMemory.identifiers;
    repeatMemory.identifiers = 50;
    try {
      // Identifiers a bulk file must quote: the per-row results are matched back to them by position.
      const odd = ["a,b", 'say "hi"', "two\nlines", "0700", "ünï code"];
      const ids = [...Array.from({ length: 3000 }, (_, i) => `P${i}`), ...odd];
      const rows = ids.map((id, i) => [id, `Part ${i}`, String(i)]);
      const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });

      h.writeFeed("feed-1.csv", csv(HEADER, rows));
      const first = await h.run(automation);
      expect(first.counts).toMatchObject({ rows: 3005, create: 3005, failed: 0 });
      for (const id of odd) expect(h.items().get(id)).toMatchObject({ guid: id });
      // Each row's log names the identifier read back from its bulk file, matched to the service's result row.
      const logs = await h.worker.env.store.searchLogs({ account: h.worker.env.account, job_id: first.id, identifier: odd, records: 100 });
      expect(logs.logs.map((l) => [l.identifier, l.result]).sort()).toEqual(odd.map((id) => [id, "success"]).sort());

      // Two rows past the finder's memory name the same identifier: the last one wins, as in a small feed.
      h.writeFeed("feed-2.csv", csv(HEADER, [...rows.slice(0, 2000), ["P2500", "Part 2500 early", "1"], ...rows.slice(2000)]));
      const second = await h.run(automation, { diff: true });
      expect(second.counts).toMatchObject({ rows: 3006, create: 0, update: 0, unchanged: 3005, failed: 0 });
      expect(h.items().get("P2500")).toMatchObject({ title: "Part 2500", stock: "2500" });

      h.writeFeed("feed-3.csv", csv(HEADER, [...rows.slice(0, 2600), ["P2500", "Part 2500 late", "9"], ...rows.slice(2600)]));
      const third = await h.run(automation, { diff: true });
      expect(third.counts).toMatchObject({ rows: 3006, update: 1, unchanged: 3004, failed: 0 });
      expect(h.items().get("P2500")).toMatchObject({ title: "Part 2500 late", stock: "9" });
    } finally {
      repeatMemory.identifiers = held;
    }
  });
});

describe("csvCell", () => {
  it("quotes exactly as the worker's CSV writer does", () => {
    const values = ["", "plain", "a,b", 'say "hi"', "line\nbreak", "cr\r", " lead", "trail ", "\tx", "x\u00a0", "\ufeffbom", "ünï", '"', ",", "a b"];
    for (const v of values) expect(csvCell(v)).toBe(csvField(v, ",", '"'));
  });
});
