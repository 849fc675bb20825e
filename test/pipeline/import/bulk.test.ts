import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "../harness.js";

/** `bulk_file: 1`: a feed that already is a service bulk file is sent as it is, in its order, without mapping. */
const debugFile = (h: Harness, runId: string, name: string): string => readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");

describe("bulk_file import", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness({ CONVEYOR_BULK_ROWS: "2" });
    h.writeFeed("feed-0.csv", csv(["guid", "title", "stock"], [1, 2, 3, 4].map((i) => [`P${i}`, `Part ${i}`, "1"])));
    await h.run(h.automation({ field_map: { guid: "guid", title: "title", stock: "stock" }, create: "add" }), { key: "seed" });
  });
  afterEach(async () => {
    await h.close();
  });

  const FEED = [
    "action,guid,title,stock",
    "edit,P1,Part 1 renamed,5",
    "add,N1,New one,3",
    "add,N2,New two,3",
    "add,N3,New three,3",
    "bogus,P3,x,1",
    "edit,,x,1",
    "delete,P2,,",
    "END,P4,,",
  ].join("\n");

  it("plans, cuts and sends the file's own rows; bad rows are row errors with their lines", async () => {
    h.writeFeed("feed-1.csv", `${FEED}\n`);
    const automation = h.automation({ name: "feed-1\\.csv", field_map: {}, bulk_file: 1, error_limit: "50%" });

    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.counts).toMatchObject({ rows: 8, row_errors: 2, create: 3, update: 1, remove: 2 });
    expect(debugFile(h, debug.id, "plan.csv")).toContain("update,edit,P1,title,,Part 1 renamed");
    const errors = debugFile(h, debug.id, "errors.csv");
    expect(errors).toMatch(/^6,P3,.*unknown action ""bogus"" \(allowed: add, start, edit, relist, end, delete\)/m);
    expect(errors).toMatch(/^7,,.*the identifier is empty/m);
    // In the file's order: a new file where the action changes, and at bulk_rows (2).
    const names = debug.debug_files.filter((f) => f.startsWith("bulk-")).sort();
    expect(names).toEqual(["bulk-1.csv", "bulk-2.csv", "bulk-3.csv", "bulk-4.csv", "bulk-5.csv"]);
    expect(debugFile(h, debug.id, "bulk-2.csv")).toBe("action,guid,title,stock\r\nadd,N1,New one,3\r\nadd,N2,New two,3\r\n");
    expect(debugFile(h, debug.id, "bulk-5.csv")).toBe("action,guid,title,stock\r\nend,P4,,\r\n");
    expect(h.items().has("N1")).toBe(false);

    const live = await h.run(automation);
    expect(live.outcome).toBe("partial");
    expect(live.counts).toMatchObject({ create: 3, update: 1, remove: 2, failed: 0 });
    const items = h.items();
    expect(items.get("P1")).toMatchObject({ title: "Part 1 renamed", stock: "5" });
    expect(["N1", "N2", "N3"].every((id) => items.has(id))).toBe(true);
    expect(items.has("P2")).toBe(false);
    expect(items.get("P4")?.listed).toBe("0");
    expect(h.bulkJobs().slice(-5).map((j) => j.rows)).toEqual([1, 2, 1, 1, 1]);
  });

  it("a row the service refuses is a line of the live run's errors.csv, with its line in the file", async () => {
    h.writeFeed("feed-2.csv", "action,guid,title,stock\nadd,N7,New seven,1\nadd,N8,,1\n");
    const live = await h.run(h.automation({ name: "feed-2\\.csv", field_map: {}, bulk_file: 1 }));
    expect(live.outcome).toBe("partial");
    expect(live.counts).toMatchObject({ create: 2, failed: 1 });
    expect(live.error).toBeNull();
    expect(live.failures).toEqual([{ message: "the title field is required to create an item", count: 1, examples: ["N8"] }]);
    expect(debugFile(h, live.id, "errors.csv")).toMatch(/^3,N8,"feed-2\.csv: cannot add guid ""N8"": the title field is required to create an item"$/m);
  });

  it("refuses a file whose second column is no identifier, naming it", async () => {
    h.writeFeed("feed-1.csv", "action,title,stock\nadd,x,1\n");
    const run = await h.run(h.automation({ name: "feed-1\\.csv", field_map: {}, bulk_file: 1 }), { mode: "debug" });
    expect(run.outcome).toBe("failed");
    expect(run.error?.message).toContain('"title" is not guid, sku or id');
  });
});
