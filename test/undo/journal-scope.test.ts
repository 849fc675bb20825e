import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";

/**
 * The undo journal makes a live product run read every mapped field of its
 * scope (the values before; a diff run, of the records its plan changes,
 * after the plan: late-journal.test.ts). A diff run must still send what its debug run
 * plans: only the fields the scope reads without the journal are dropped as
 * already held, never the others.
 */
describe("a live diff run with the undo journal", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => h.close());

  it("plans in debug what it sends live, though the service holds every value already", async () => {
    const rows = Array.from({ length: 6 }, (_, i) => [`J${i}`, `Journal part ${i}`, String(i + 1), "2.50"]);
    h.writeFeed("feed-1.csv", csv(["guid", "title", "stock", "cost"], rows));
    const fileConfig = { field_map: { guid: "guid", title: "title", stock: "stock", cost: "cost" }, create: "add", update: "edit" };
    // Another automation puts the values in the service: this one's snapshot stays empty.
    expect((await h.run(h.automation(fileConfig), { key: "loader" })).outcome).toBe("success");
    const automation = h.automation(fileConfig);
    const debug = await h.run(automation, { mode: "debug", diff: true });
    const live = await h.run(automation, { diff: true });
    expect(live.outcome).toBe("success");
    expect(live.undo).toMatchObject({ journal: true });
    expect({ update: live.counts.update, unchanged: live.counts.unchanged }).toEqual({ update: debug.counts.update, unchanged: debug.counts.unchanged });
    // stock is weighed by the default change limits, so the scope reads it anyway and drops it; title and cost go.
    expect(debug.counts).toMatchObject({ update: 6, unchanged: 0 });
  });
});
