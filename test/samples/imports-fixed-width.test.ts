import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { debugRecords, expectDebugFiles, expectNoChange, recordsHeader, servicePicture } from "./expect-run.js";
import { itemsBySku, loadSample, openSampleEnv, placeSampleFile, readDebug, runSample, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/fixed-width-storage.json on the service's own storage (sdsftp, a
 * local folder in the embedded default): the mainframe extract's `[start,
 * end]` columns update stock and cost by sku; `select: new` and `move:done`
 * take each file once.
 */
const FILE = "STOCK_20260301.TXT";

const SEED: Array<Record<string, string>> = [
  { guid: "bn-12345", sku: "0000012345", title: "Hose clamp SS 1/2in", stock: "1", cost: "3.00" },
  { guid: "bn-480000", sku: "0000480000", title: "Cordless drill kit", stock: "1", cost: "60.00" },
  { guid: "bn-713752E1", sku: "713752E1", title: "Hex bolt M8x40", stock: "1", cost: "8.00" },
  { guid: "bn-0045210", sku: "0045210", title: "Nyloc nut M8", stock: "1", cost: "4.00" },
  { guid: "bn-1200E10", sku: "1200E10", title: "Threaded rod M10", stock: "1", cost: "7.00", warehouse: "old" },
  // 0000012346, 0000481000 and 0098000 are in the extract only: update-only, so they are skipped.
];

describe("samples/fixed-width-storage.json", () => {
  let env: SampleEnv;
  let feed: string;

  beforeAll(async () => {
    env = await openSampleEnv();
    feed = await placeSampleFile(`storage/feeds/mainframe/${FILE}`, path.join(env.storageRoot, "feeds", "mainframe", FILE));
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await env.close();
  });

  it("debug run: reads the offsets past the header line, plans five edits, changes nothing and leaves the file", async () => {
    const before = await servicePicture(env);
    const source = await readFile(feed);
    const run = await runSample(env, await loadSample("fixed-width-storage.json"), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 8, row_errors: 0, create: 0, update: 5, unchanged: 0, remove: 0, skipped: 3, failed: 0 });
    await expectDebugFiles(env, run, [FILE]);
    expect(await debugRecords(env, run)).toEqual(
      expect.arrayContaining([
        { sku: "0000012345", stock: "148", cost: "3.42", warehouse: "Bolt & Nut (mainframe)" },
        { sku: "713752E1", stock: "1204", cost: "8.06", warehouse: "Bolt & Nut (mainframe)" },
      ]),
    );
    expect(await recordsHeader(env, run)).toEqual(expect.arrayContaining(["sku", "stock", "cost", "warehouse"]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("update,edit,0000012345,stock,1,148");
    expect(plan).toContain("update,edit,713752E1,cost,8.00,8.06");
    expect(plan).toMatch(/skipped,,0098000,/);
    await expectNoChange(env, run, before);
    expect(await readFile(feed)).toEqual(source);
  });

  it("live run: stock and cost by sku with identifiers intact, the warehouse label, the file moved to done/", async () => {
    const run = await runSample(env, await loadSample("fixed-width-storage.json"), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 8, row_errors: 0, update: 5, skipped: 3, failed: 0 });
    expect(run.files).toEqual([expect.objectContaining({ name: FILE, size: 633 })]);
    const items = await itemsBySku(env, ["0000012345", "0000480000", "713752E1", "0045210", "1200E10", "0000012346", "0098000"]);
    const label = "Bolt & Nut (mainframe)";
    expect(items.get("0000012345")).toMatchObject({ guid: "bn-12345", stock: "148", cost: "3.42", warehouse: label, title: "Hose clamp SS 1/2in" });
    expect(items.get("0000480000")).toMatchObject({ guid: "bn-480000", stock: "12", cost: "61.10", warehouse: label });
    expect(items.get("713752E1")).toMatchObject({ guid: "bn-713752E1", stock: "1204", cost: "8.06", warehouse: label });
    expect(items.get("0045210")).toMatchObject({ guid: "bn-0045210", stock: "310", cost: "4.03", warehouse: label });
    expect(items.get("1200E10")).toMatchObject({ guid: "bn-1200E10", stock: "22", cost: "7.31", warehouse: label });
    expect(items.get("0000012346")).toBeNull();
    expect(items.get("0098000")).toBeNull();

    expect(existsSync(feed)).toBe(false);
    expect(existsSync(path.join(env.storageRoot, "feeds", "mainframe", "done", FILE))).toBe(true);
    expect(await env.worker.env.store.getRun(run.id)).toMatchObject({ outcome: "success", counts: run.counts });
  });

  it("the next run has nothing new to read: outcome nothing, no error (require_file: false)", async () => {
    const run = await runSample(env, await loadSample("fixed-width-storage.json"), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("nothing");
    expect(run.counts.rows).toBe(0);
  });
});
