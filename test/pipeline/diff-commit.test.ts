import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "./harness.js";

/**
 * A diff run commits only the snapshot entries that changed; the ones that
 * already held the row's values are left alone. These runs prove the
 * snapshot still says exactly what was applied after several diff runs.
 */
const HEADER = ["guid", "title", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };
const feed = (stock: (i: number) => string): string =>
  csv(HEADER, Array.from({ length: 300 }, (_, i) => [`D${String(i).padStart(4, "0")}`, `Item ${i}`, stock(i)]));

describe("diff run commit", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("sends each change once, again after it is reverted, and nothing for a repeated file", async () => {
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    h.writeFeed("feed.csv", feed((i) => String(i % 5)));
    expect((await h.run(automation)).counts).toMatchObject({ create: 300 });

    h.writeFeed("feed.csv", feed((i) => (i % 100 === 0 ? "77" : String(i % 5))));
    expect((await h.run(automation, { diff: true })).counts).toMatchObject({ update: 3, unchanged: 297 });
    expect(h.items().get("D0100")?.stock).toBe("77");

    // The same file again: the committed snapshot holds the changes, so nothing is sent.
    const again = await h.run(automation, { diff: true });
    expect(again.counts).toMatchObject({ update: 0, unchanged: 300 });
    expect(again.requests.write).toBe(1);

    // Back to the first file: the three rows differ from the snapshot again and go out; the rest stay unchanged.
    h.writeFeed("feed.csv", feed((i) => String(i % 5)));
    const back = await h.run(automation, { diff: true });
    expect(back.counts).toMatchObject({ update: 3, unchanged: 297 });
    expect(h.items().get("D0100")?.stock).toBe("0");

    // A full run still re-sends everything and rewrites the whole snapshot.
    expect((await h.run(automation)).counts).toMatchObject({ update: 300 });
    expect((await h.run(automation, { diff: true })).counts).toMatchObject({ update: 0, unchanged: 300 });
  });
});
