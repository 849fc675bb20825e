import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "./harness.js";

/**
 * A feed with no records is a normal day (no stock changes, no shipments):
 * the run reads it, changes nothing and says so. Only with remove set does
 * it stop, at the empty-feed guard. A JSON or XML feed used to fail its
 * header check instead, as if every mapped field had been renamed.
 */
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };

describe("a feed with no records", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
    h.writeFeed("seed.csv", csv(["guid", "title", "stock"], [["E1", "Bolt", "4"], ["E2", "Nut", "6"]]));
    expect((await h.run(h.automation({ field_map: FIELD_MAP, create: "add", name: "seed.csv" }))).outcome).toBe("success");
  });
  afterEach(async () => {
    await h.close();
  });

  it.each([
    ["feed.json", '{"items":[]}', { format: "json", root: "items" }],
    ["feed.xml", "<feed></feed>", { format: "xml", root: "/feed/item" }],
    ["feed.csv", "guid,title,stock\n", {}],
  ])("%s: reads no row and writes nothing; with remove it stops at the empty-feed guard", async (name, body, extra) => {
    writeFileSync(path.join(h.feeds, name), body);
    const jobs = h.bulkJobs().length;
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", name, ...extra }), { mode: "prod" });
    expect(run.error).toBeFalsy();
    expect(run.counts).toMatchObject({ rows: 0, row_errors: 0, update: 0 });
    expect(h.bulkJobs()).toHaveLength(jobs);

    const guarded = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", remove: "end", name, ...extra }), { mode: "prod" });
    expect(guarded.guard?.name).toBe("empty_feed");
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect(h.items().get("E1")?.stock).toBe("4");
  });
});
