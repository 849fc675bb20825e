import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import iconv from "iconv-lite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "./harness.js";

/**
 * A supplier's feed in windows-1252 read as UTF-8 (no `encoding` set) must
 * not write "Caf\uFFFD" into the catalogue: the garbled records are row errors
 * that name the fix, the plain ones apply, and a file garbled throughout
 * stops at error_limit before any write.
 */
const HEADER = ["guid", "title", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };
const rows = (n: number, title: (i: number) => string): string[][] => Array.from({ length: n }, (_, i) => [`C${String(i).padStart(3, "0")}`, title(i), "5"]);

describe("a feed in another charset than configured", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
    h.writeFeed("seed.csv", csv(HEADER, rows(100, (i) => `Part ${i}`)));
    expect((await h.run(h.automation({ field_map: FIELD_MAP, create: "add", name: "seed.csv" }))).outcome).toBe("success");
  });
  afterEach(async () => {
    await h.close();
  });

  it("turns each garbled record into a row error naming the fix; the clean records apply", async () => {
    const body = csv(HEADER, rows(100, (i) => (i % 25 === 3 ? `Crème ${i}` : `Part ${i} v2`)));
    writeFileSync(path.join(h.feeds, "feed.csv"), iconv.encode(body, "windows-1252"));
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", name: "feed.csv" }), { mode: "prod" });
    expect(run.outcome).toBe("partial");
    expect(run.counts).toMatchObject({ rows: 100, row_errors: 4, update: 96 });
    const errors = readFileSync(path.join(h.dir, ".conveyor", "runs", run.id, "debug", "errors.csv"), "utf8");
    expect(errors).toMatch(/^5,C003,.*not valid utf-8 .*set encoding in the file config/m);
    expect(h.items().get("C004")?.title).toBe("Part 4 v2");
    expect(h.items().get("C003")?.title).toBe("Part 3");
    expect([...h.items().values()].some((item) => String(item.title).includes("\uFFFD"))).toBe(false);

    const fixed = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", name: "feed.csv", encoding: "windows-1252" }), { mode: "prod" });
    expect(fixed.outcome).toBe("success");
    expect(h.items().get("C003")?.title).toBe("Crème 3");
  });

  it("stops before any write when most records are garbled, quoting the first error", async () => {
    writeFileSync(path.join(h.feeds, "feed.csv"), iconv.encode(csv(HEADER, rows(100, (i) => `Größe ${i}`)), "windows-1252"));
    const jobs = h.bulkJobs().length;
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", name: "feed.csv" }), { mode: "prod" });
    expect(run.outcome).toBe("failed");
    expect(run.guard?.name).toBe("error_limit");
    expect(run.guard?.message).toMatch(/100 of 100 rows .* over error_limit 10%: nothing was written\. The first: feed\.csv, line 2: .*not valid utf-8.*set encoding/);
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect(h.items().get("C000")?.title).toBe("Part 0");
  });
});
