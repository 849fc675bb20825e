import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AHEAD_FROM_BYTES, OpWriter } from "../../../src/pipeline/output/op-writer.js";
import { csv, openHarness, type Harness } from "../harness.js";

const HEADER = ["guid", "title", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };

/** Rows of more than `bytes` of CSV in all. */
function rowsOf(bytes: number): string[][] {
  const title = "t".repeat(200);
  return Array.from({ length: Math.ceil(bytes / title.length) }, (_, i) => [`P${i}`, title, String(i)]);
}

describe("the op writer's thread, started while the feed downloads", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("starts for a debug or live run of a large feed, not for a diff run of it nor for a small feed", async () => {
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    const ahead = vi.spyOn(OpWriter.prototype, "startAhead");
    try {
      const large = rowsOf(AHEAD_FROM_BYTES + (1 << 16));
      h.writeFeed("feed-1.csv", csv(HEADER, large));
      expect((await h.run(automation, { mode: "debug" })).counts).toMatchObject({ create: large.length });
      expect(ahead).toHaveBeenCalledTimes(1);
      expect((await h.run(automation)).counts).toMatchObject({ create: large.length });
      expect(ahead).toHaveBeenCalledTimes(2);
      // The diff run writes only what changed: nothing here.
      expect((await h.run(automation, { diff: true })).counts).toMatchObject({ create: 0, update: 0, unchanged: large.length });
      expect(ahead).toHaveBeenCalledTimes(2);

      h.writeFeed("feed-1.csv", csv(HEADER, rowsOf(AHEAD_FROM_BYTES / 4)));
      await h.run(automation, { mode: "debug" });
      expect(ahead).toHaveBeenCalledTimes(2);
    } finally {
      ahead.mockRestore();
    }
  });
});
