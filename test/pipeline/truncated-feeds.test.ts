import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { csv, openHarness, type Harness } from "./harness.js";

/**
 * A feed cut short in transfer (runs.md: a failed run leaves the service, the
 * source files and the state as a re-run needs them): a cut compressed,
 * JSON or XML file fails the run naming the file; a cut CSV is caught by
 * its last record, which ends inside the record without a line break.
 */
const HEADER = ["guid", "title", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };
const rows = (n: number, stock: string): string[][] => Array.from({ length: n }, (_, i) => [`T${String(i).padStart(4, "0")}`, `Part ${i}`, stock]);
const half = (text: string, at = 0.5): Buffer => Buffer.from(text.slice(0, Math.floor(text.length * at)));
const records = (stock: string): Array<Record<string, string>> => rows(400, stock).map(([guid = "", title = "", stock = ""]) => ({ guid, title, stock }));

describe("a truncated feed", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
    h.writeFeed("feed-1.csv", csv(HEADER, rows(400, "1")));
    const first = await h.run(h.automation({ field_map: FIELD_MAP, create: "add", name: "feed-1.csv" }));
    expect(first.outcome).toBe("success");
  });
  afterEach(async () => {
    await h.close();
  });

  const nextRun = (name: string, extra: Record<string, unknown> = {}) =>
    h.automation({ field_map: FIELD_MAP, update: "edit", remove: "end", remove_limit: "90%", name: "feed-2.*", select: "new", after_import: "delete", ...extra });

  it.each([
    ["gzip", "feed-2.csv.gz", (): Buffer => { const z = gzipSync(csv(HEADER, rows(4000, "7"))); return z.subarray(0, Math.floor(z.length * 0.9)); }, {}, /^feed-2\.csv\.gz: the gzip file ends before the compressed data does: the file is cut short/],
    ["json", "feed-2.json", (): Buffer => half(JSON.stringify({ items: records("7") })), { format: "json", root: "items" }, /^feed-2\.json: /],
    ["xml", "feed-2.xml", (): Buffer => half(`<items>${records("7").map((r) => `<item><guid>${r.guid}</guid><title>${r.title}</title><stock>${r.stock}</stock></item>`).join("")}</items>`), { format: "xml", root: "items" }, /^feed-2\.xml: /],
  ])("%s: fails the run naming the file, before any write", async (_kind, name, body, extra, message) => {
    writeFileSync(path.join(h.feeds, name), body());
    const jobs = h.bulkJobs().length;
    const cut = await h.run(nextRun(name, extra));
    expect(cut.outcome).toBe("failed");
    expect(cut.error?.code).toBe("file_format");
    expect(cut.error?.message).toMatch(message);
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect([...h.items().values()].every((i) => i.stock === "1")).toBe(true);
    // Not deleted and not in the ledger: the complete file, uploaded again, is read by the next run.
    expect(existsSync(path.join(h.feeds, name))).toBe(true);
  });

  it("csv cut inside a record, with remove set: the cut_feed guard stops the run however little was lost", async () => {
    // 95% of the file: far under remove_limit, so only the cut record gives the truncation away.
    writeFileSync(path.join(h.feeds, "feed-2.csv"), half(csv(HEADER, rows(400, "7")), 0.95));
    const jobs = h.bulkJobs().length;
    const cut = await h.run(nextRun("feed-2.csv"));
    expect(cut.outcome).toBe("failed");
    expect(cut.guard?.name).toBe("cut_feed");
    expect(cut.guard?.message).toMatch(/^the file ends inside the record at feed-2\.csv, line 382, so it looks cut short, and remove is set: nothing was written/);
    expect(cut.guard?.message).toContain("--force");
    expect(h.bulkJobs()).toHaveLength(jobs);
    expect(existsSync(path.join(h.feeds, "feed-2.csv"))).toBe(true);

    // The supplier's file is whole again: the run goes through and removes nothing it should not.
    writeFileSync(path.join(h.feeds, "feed-2.csv"), csv(HEADER, rows(400, "7")));
    const whole = await h.run(nextRun("feed-2.csv"));
    expect(whole.outcome).toBe("success");
    expect(whole.counts).toMatchObject({ rows: 400, update: 400, remove: 0 });
  });

  it("csv cut inside a quoted field: the cut record is a row error that says so; without remove the good rows apply", async () => {
    const text = csv(HEADER, rows(10, "7").map(([g = "", , s = ""], i) => [g, `Part ${i}, "quoted"`, s]));
    writeFileSync(path.join(h.feeds, "feed-2.csv"), Buffer.from(text.slice(0, text.lastIndexOf('"quoted"'))));
    const cut = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", name: "feed-2.csv", error_limit: "50%" }), { mode: "prod" });
    expect(cut.outcome).toBe("partial");
    expect(cut.counts).toMatchObject({ rows: 10, row_errors: 1, update: 9 });
    const errors = readFileSync(path.join(h.dir, ".conveyor", "runs", cut.id, "debug", "errors.csv"), "utf8");
    expect(errors).toMatch(/^11,T0009,.*the file ends inside this record: it looks cut short/m);
    expect(h.items().get("T0008")?.stock).toBe("7");
    expect(h.items().get("T0009")?.stock).toBe("1");
  });

  it("a file without a line break after its last, complete record is not cut", async () => {
    writeFileSync(path.join(h.feeds, "feed-2.csv"), csv(HEADER, rows(400, "7")).trimEnd());
    const run = await h.run(nextRun("feed-2.csv"));
    expect(run.guard).toBeNull();
    expect(run.counts).toMatchObject({ rows: 400, update: 400, row_errors: 0 });
  });
});
