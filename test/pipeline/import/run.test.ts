import { createHash } from "node:crypto";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DebugFiles } from "../../../src/pipeline/debug-files.js";
import { csv, openHarness, type Harness } from "../harness.js";

/** Whole product imports against the embedded service over HTTP, on the service's local storage. */
const HEADER = ["guid", "title", "stock", "cost", "brand"];
const catalogue = (n: number, stock = (i: number) => String(i % 7)): string[][] =>
  Array.from({ length: n }, (_, i) => [`P${String(i).padStart(5, "0")}`, `Part ${i}, "quoted"`, stock(i), `${(i % 50) + 0.5}`, "Acme"]);
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock", cost: "cost", brand: "brand" };

function debugFile(h: Harness, runId: string, name: string): string {
  return readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");
}

function folderDigest(folder: string): string {
  const hash = createHash("sha256");
  for (const name of readdirSync(folder).sort()) hash.update(name).update(readFileSync(path.join(folder, name)));
  return hash.digest("hex");
}

describe("product import run", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("creates, then a diff run with 1% changed sends only the changed field of the changed rows", async () => {
    const rows = catalogue(1000);
    h.writeFeed("feed-1.csv", csv(HEADER, rows));
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    const first = await h.run(automation);
    expect(first.outcome).toBe("success");
    expect(first.counts).toMatchObject({ rows: 1000, create: 1000, update: 0, failed: 0 });
    expect(h.items().size).toBe(1000);
    expect(h.items().get("P00042")).toMatchObject({ title: 'Part 42, "quoted"', stock: "0", cost: "42.5" });

    const changed = rows.map((r, i) => (i % 100 === 0 ? [r[0] ?? "", r[1] ?? "", "999", r[3] ?? "", r[4] ?? ""] : r));
    h.writeFeed("feed-1.csv", csv(HEADER, changed));
    const jobsBefore = h.bulkJobs().length;
    const diff = await h.run(automation, { diff: true });
    expect(diff.outcome).toBe("success");
    expect(diff.counts).toMatchObject({ rows: 1000, update: 10, unchanged: 990, create: 0 });
    const jobs = h.bulkJobs().slice(jobsBefore);
    // one bulk file for 10 rows of one column set; plus the scope read, the only other write-class request
    expect(jobs).toHaveLength(1);
    expect(diff.requests.write).toBe(2);
    const sent = readFileSync(jobs[0]?.upload ?? "", "utf8").trim().split(/\r?\n/);
    expect(sent[0]).toBe("action,guid,stock");
    expect(sent.slice(1)).toEqual(Array.from({ length: 10 }, (_, k) => `edit,P${String(k * 100).padStart(5, "0")},999`));
    expect(h.items().get("P00100")?.stock).toBe("999");
  });

  it("a debug run reads the file while it keeps its copy, and fails when the copy cannot be kept", { timeout: 20_000 }, async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(120)));
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    const addSource = DebugFiles.prototype.addSource;
    const notePlan = DebugFiles.prototype.notePlan;
    // The copy waits until the plan is made: a pass that waited for the copy would never make it.
    let planned = (): void => undefined;
    const gate = new Promise<void>((resolve) => (planned = resolve));
    const plan = vi.spyOn(DebugFiles.prototype, "notePlan").mockImplementation(function (this: DebugFiles) {
      planned();
      notePlan.call(this);
    });
    const copy = vi.spyOn(DebugFiles.prototype, "addSource").mockImplementation(async function (this: DebugFiles, localPath, name) {
      await gate;
      return addSource.call(this, localPath, name);
    });
    try {
      const debug = await h.run(automation, { mode: "debug" });
      expect(debug.outcome).toBe("success");
      expect(debug.debug_files).toContain("source/feed-1.csv");
      // Failing at once, while the pass still reads: the run waits for the pass, then fails.
      copy.mockImplementation(async () => {
        throw new Error("no space left on the device");
      });
      const failed = await h.run(automation, { mode: "debug" });
      expect(failed.outcome).toBe("failed");
      expect(failed.counts.rows).toBe(120);
      expect(JSON.stringify(failed.error)).toContain("no space left on the device");
    } finally {
      plan.mockRestore();
      copy.mockRestore();
    }
  });

  it("a debug run writes nothing, and its bulk files are what the live run sends", async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(120)));
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit", select: "new", after_import: "move:done" });
    const statePath = path.join(h.dir, ".conveyor", "state.db");
    const sourceBefore = folderDigest(h.feeds);
    const snapshotBefore = await h.worker.env.store.snapshotCount(`${automation.slug}#0`);
    const itemsBefore = JSON.stringify([...h.items()]);

    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.outcome).toBe("success");
    expect(debug.counts.create).toBe(120);
    expect(debug.debug_files).toEqual(expect.arrayContaining(["summary.json", "plan.csv", "records.csv", "bulk-1.csv", "source/feed-1.csv"]));
    expect(JSON.stringify([...h.items()])).toBe(itemsBefore);
    expect(h.bulkJobs()).toHaveLength(0);
    expect(folderDigest(h.feeds)).toBe(sourceBefore);
    expect(await h.worker.env.store.snapshotCount(`${automation.slug}#0`)).toBe(snapshotBefore);
    expect(await h.worker.env.store.ledgerHas(`${automation.slug}#0`, { path: "feed-1.csv", size: 0, modified: null })).toBe(false);
    expect(existsSync(statePath)).toBe(true);
    const plan = debugFile(h, debug.id, "plan.csv").split(/\r?\n/);
    expect(plan[0]).toBe("operation,action,identifier,field,before,after,change");
    expect(plan).toContain("create,add,P00001,stock,,1,new");

    const live = await h.run(automation);
    expect(live.outcome).toBe("success");
    // summary.json said what the live run would send: its writes exactly, its reads at least.
    const predicted = (JSON.parse(debugFile(h, debug.id, "summary.json")) as { live_requests: { read: number; write: number } }).live_requests;
    expect(predicted.write).toBe(live.requests.write);
    expect(predicted.read).toBeLessThanOrEqual(live.requests.read);
    const jobs = h.bulkJobs();
    expect(jobs).toHaveLength(1);
    for (const [i, job] of jobs.entries()) expect(readFileSync(job.upload, "utf8")).toBe(debugFile(h, debug.id, `bulk-${i + 1}.csv`));
    // after_import only after the live run applied the file
    expect(readdirSync(h.feeds)).toEqual(["done"]);
  });

  it("a file of which the service refused every record stays in place and is read again by the next run", async () => {
    // No title: the service refuses every create.
    const rows = catalogue(10).map((r) => [r[0] ?? "", "", ...r.slice(2)]);
    h.writeFeed("feed-1.csv", csv(HEADER, rows));
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit", select: "new", after_import: "move:done" });
    const first = await h.run(automation);
    expect(first.outcome).toBe("failed");
    expect(first.counts).toMatchObject({ create: 10, failed: 10 });
    expect(readdirSync(h.feeds)).toEqual(["feed-1.csv"]);
    const again = await h.run(automation);
    expect(again.outcome).toBe("failed");
    expect(again.counts).toMatchObject({ rows: 10, failed: 10 });
    // Fixed by the supplier: the same name, now applied and moved.
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(10)));
    const fixed = await h.run(automation);
    expect(fixed.outcome).toBe("success");
    expect(readdirSync(h.feeds)).toEqual(["done"]);
  });

  it("rows the service refuses keep their old snapshot: the next diff run sends them again, and only them", async () => {
    // The service refuses to create an item without a title; the feed's other rows stand.
    const rows = catalogue(30).map((r, i) => (i % 10 === 3 ? [r[0] ?? "", "", ...r.slice(2)] : r));
    h.writeFeed("feed-1.csv", csv(HEADER, rows));
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    const first = await h.run(automation);
    expect(first.outcome).toBe("partial");
    expect(first.counts).toMatchObject({ rows: 30, create: 30, failed: 3 });
    expect(h.items().size).toBe(27);
    expect(await h.worker.env.store.snapshotCount(`${automation.slug}#0`)).toBe(27);

    const fixed = catalogue(30);
    h.writeFeed("feed-2.csv", csv(HEADER, fixed));
    const again = await h.run(automation, { diff: true });
    expect(again.outcome).toBe("success");
    expect(again.counts).toMatchObject({ create: 3, update: 0, unchanged: 27, failed: 0 });
    expect(h.items().get("P00013")).toMatchObject({ title: 'Part 13, "quoted"' });
  });

  it("reports each bulk file sent during apply, for the progress bar", async () => {
    const small = await openHarness({ CONVEYOR_BULK_ROWS: "10" });
    try {
      small.writeFeed("feed-1.csv", csv(HEADER, catalogue(25)));
      const seen: string[] = [];
      const run = await small.run(small.automation({ field_map: FIELD_MAP, create: "add" }), { progress: (p) => p.stage === "apply" && seen.push(`${p.done}/${p.total}`) });
      expect(run.outcome).toBe("success");
      expect(seen).toEqual(["0/3", "1/3", "2/3", "3/3"]);
    } finally {
      await small.close();
    }
  });

  it("reports malformed rows with their line numbers and applies the good ones", async () => {
    const text = csv(HEADER, catalogue(20)) + "P99999,only three,cells\n" + ",no guid,1,1,Acme\n";
    h.writeFeed("feed-1.csv", text);
    const run = await h.run(h.automation({ field_map: FIELD_MAP, create: "add", error_limit: "20%" }));
    expect(run.outcome).toBe("partial");
    expect(run.counts).toMatchObject({ rows: 22, row_errors: 2, create: 20 });
    expect(h.items().size).toBe(20);
    const debugRun = await h.run(h.automation({ field_map: FIELD_MAP, create: "add", error_limit: "20%" }), { mode: "debug" });
    const errors = debugFile(h, debugRun.id, "errors.csv");
    expect(errors).toMatch(/^22,.*line 22 has 3 fields, the header has 5/m);
    expect(errors).toMatch(/^23,/m);
  });
});

describe("guards stop before any write", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(100)));
    await h.run(h.automation({ field_map: FIELD_MAP, create: "add" }), { key: "seed" });
  });
  afterEach(async () => {
    await h.close();
  });

  const expectNoWrites = (jobsBefore: number, items: string): void => {
    expect(h.bulkJobs()).toHaveLength(jobsBefore);
    expect(JSON.stringify([...h.items()])).toBe(items);
  };

  it("a renamed column names the missing and the available columns", async () => {
    h.writeFeed("feed-1.csv", csv(["guid", "title", "qty", "cost", "brand"], catalogue(100)));
    const [jobs, items] = [h.bulkJobs().length, JSON.stringify([...h.items()])];
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit" }));
    expect(run.outcome).toBe("failed");
    expect(run.error?.code).toBe("header_mismatch");
    expect(run.error?.message).toContain("stock");
    expect(run.error?.message).toContain("qty");
    expectNoWrites(jobs, items);
  });

  it("an empty feed with remove never removes, even forced", async () => {
    h.writeFeed("feed-1.csv", HEADER.join(",") + "\n");
    const [jobs, items] = [h.bulkJobs().length, JSON.stringify([...h.items()])];
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit", remove: "end" }), { force: true });
    expect(run.outcome).toBe("failed");
    expect(run.guard?.name).toBe("empty_feed");
    expectNoWrites(jobs, items);
  });

  it("a feed that would end 60% of the scope stops and says how to force it; forced, it ends them", async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(40)));
    const automation = h.automation({ field_map: FIELD_MAP, update: "edit", remove: "end" });
    const [jobs, items] = [h.bulkJobs().length, JSON.stringify([...h.items()])];
    const run = await h.run(automation);
    expect(run.guard?.name).toBe("remove_limit");
    expect(run.guard?.message).toContain("60 of 100");
    expect(run.guard?.message).toContain("--force");
    expectNoWrites(jobs, items);
    const forced = await h.run(automation, { force: true });
    expect(forced.outcome).toBe("success");
    expect(forced.counts.remove).toBe(60);
    expect(h.items().get("P00099")?.listed).toBe("0");
  });

  it("a debug run's plan shows each updated field's value before and after", async () => {
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(100, () => "9")));
    const debug = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit" }), { mode: "debug" });
    expect(debug.counts.update).toBe(100);
    const plan = debugFile(h, debug.id, "plan.csv").split(/\r?\n/);
    expect(plan).toContain("update,edit,P00001,stock,1,9,changed");
    expect(plan).toContain("update,edit,P00001,cost,1.5,1.5,same");
  });

  it("a record skipped by a rule or whose row failed is still in the feed: remove leaves it alone", async () => {
    const rows = catalogue(100);
    const bad = rows[7];
    if (bad) bad[3] = "n/a";
    h.writeFeed("feed-1.csv", csv(HEADER, rows));
    const automation = h.automation({
      field_map: FIELD_MAP,
      update: "edit",
      remove: "delete",
      vendor_actions: [
        { search: "guid:=P00003", skip: true },
        { calculate: { cost: "cost * 2" } },
      ],
    });
    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.counts).toMatchObject({ skipped: 1, row_errors: 1, remove: 0 });
    // The failed row's identifier was mapped before it failed: errors.csv names it.
    expect(debugFile(h, debug.id, "errors.csv")).toMatch(/^9,P00007,/m);
    const run = await h.run(automation);
    expect(run.counts).toMatchObject({ skipped: 1, row_errors: 1, remove: 0 });
    expect(h.items().has("P00003")).toBe(true);
    expect(h.items().has("P00007")).toBe(true);
    // Both were touched by the run: each has its log record.
    const logs = (await h.worker.env.store.searchLogs({ account: h.worker.env.account, records: 1000 })).logs.filter((l) => l.job_id === run.id && l.action === "skip");
    expect(logs.map((l) => [l.identifier, l.result]).sort()).toEqual([["P00003", "warning"], ["P00007", "error"]]);
    expect(logs.find((l) => l.identifier === "P00007")?.message).toContain("calculate");
  });

  it("a row the parser refuses (a cell too many) still names its record: remove leaves it alone", async () => {
    const lines = csv(HEADER, catalogue(100)).split("\n");
    // Line 12 is P00010's row with an extra cell.
    lines[11] = `${lines[11] ?? ""},extra`;
    h.writeFeed("feed-1.csv", lines.join("\n"));
    const automation = h.automation({ field_map: FIELD_MAP, update: "edit", remove: "delete" });
    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.counts).toMatchObject({ row_errors: 1, remove: 0 });
    expect(debugFile(h, debug.id, "errors.csv")).toMatch(/^12,P00010,.*line 12 has 6 fields, the header has 5/m);
    const run = await h.run(automation);
    expect(run.counts).toMatchObject({ row_errors: 1, remove: 0 });
    expect(h.items().has("P00010")).toBe(true);
  });

  it("error_limit weighs each file config's errors against its own rows", async () => {
    const good = (prefix: string, n: number): string[][] => catalogue(n).map((r) => [`${prefix}${r[0] ?? ""}`, ...r.slice(1)]);
    const bad = Array.from({ length: 15 }, (_, i) => `AB${i},too,few`);
    h.writeFeed("a-1.csv", csv(HEADER, good("A", 185)) + bad.join("\n") + "\n");
    h.writeFeed("b-1.csv", csv(HEADER, good("B", 100)));
    const config = (name: string): Record<string, unknown> => ({ name, identifier: "guid", field_map: FIELD_MAP, create: "add" });
    const run = await h.run(h.automation({}, { file_configs: [config("a-.*\\.csv"), config("b-.*\\.csv")] }));
    // 15 of 200 (7.5%) in the first, none of 100 in the second: both under the default 10%.
    expect(run.guard).toBeNull();
    expect(run.counts).toMatchObject({ rows: 300, row_errors: 15, create: 285 });
  });

  it("20% malformed rows stop the run over the default error_limit", async () => {
    const bad = Array.from({ length: 20 }, (_, i) => `B${i},too,few`);
    h.writeFeed("feed-1.csv", csv(HEADER, catalogue(80)) + bad.join("\n") + "\n");
    const [jobs, items] = [h.bulkJobs().length, JSON.stringify([...h.items()])];
    const run = await h.run(h.automation({ field_map: FIELD_MAP, update: "edit" }));
    expect(run.guard?.name).toBe("error_limit");
    expect(run.guard?.message).toContain("20 of 100 rows (20%)");
    expect(run.guard?.message).toContain("--force");
    expectNoWrites(jobs, items);
  });
});
