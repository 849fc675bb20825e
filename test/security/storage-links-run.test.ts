import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";

/**
 * The case end to end: an sdsftp import of the account `demo` whose
 * connection path is a link to another account's folder. The run fails with
 * unsafe_path before it reads a row, and its error names no server path.
 */
describe("a run through a storage link", () => {
  let h: Harness;
  let storage: string;
  beforeEach(async () => {
    h = await openHarness();
    storage = path.dirname(path.dirname(h.feeds));
    const bob = path.join(storage, "bob", "private");
    mkdirSync(bob, { recursive: true });
    writeFileSync(path.join(bob, "feed.csv"), csv(["guid", "title"], [["BOB-1", "bob's product"]]));
    rmSync(h.feeds, { recursive: true, force: true });
    symlinkSync("../bob/private", h.feeds);
  });
  afterEach(() => h.close());

  it("refuses the linked connection path and imports nothing of bob's", async () => {
    const run = await h.run(h.automation({ field_map: { guid: "guid", title: "title" }, create: "add", update: "edit" }));
    expect(run.error?.code).toBe("unsafe_path");
    expect(run.error?.message).toContain("/feeds in the account's storage is a link");
    expect(JSON.stringify(run.error)).not.toContain(storage);
    expect(h.items().has("BOB-1")).toBe(false);
  });
});
