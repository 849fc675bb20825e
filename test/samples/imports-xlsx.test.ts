import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { debugRecords, expectDebugFiles, expectNoChange, recordsHeader, servicePicture } from "./expect-run.js";
import { itemsBySku, loadSample, openSampleEnv, placeSampleFile, readDebug, runSample, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/price-list-xlsx-storage.json on the service's storage (sds3, a
 * local folder in the embedded default): the "Prices" sheet below its title
 * row sets cost, msrp, upc, and price = net × the `price markup` parameter,
 * except where the product is tagged price-locked.
 */
const FILE = "prices_2026-03.xlsx";

const SEED: Array<Record<string, string>> = [
  { guid: "bn-713752E1", sku: "713752E1", title: "Hex bolt M8x40", cost: "7.00", price: "10.00", msrp: "11.00" },
  { guid: "bn-713752E2", sku: "713752E2", title: "Hex bolt M8x50", cost: "8.00", price: "19.99", msrp: "20.00", tags: "bolts price-locked" },
  { guid: "bn-0045210", sku: "0045210", title: "Nyloc nut M8", cost: "4.00", price: "5.00" },
  { guid: "bn-1200E10", sku: "1200E10", title: "Threaded rod M10", cost: "7.00", price: "9.00" },
  // 0045211 and 0098000 are in the price list only: update-only, so they are skipped.
];

describe("samples/price-list-xlsx-storage.json", () => {
  let env: SampleEnv;
  let workbook: string;

  beforeAll(async () => {
    env = await openSampleEnv();
    workbook = await placeSampleFile(`storage/pricelists/${FILE}`, path.join(env.storageRoot, "pricelists", FILE));
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await env.close();
  });

  it("debug run: reads the Prices sheet under its title row, plans four edits, changes nothing", async () => {
    const before = await servicePicture(env);
    const source = await readFile(workbook);
    const run = await runSample(env, await loadSample("price-list-xlsx-storage.json"), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 6, row_errors: 0, create: 0, update: 4, unchanged: 0, remove: 0, skipped: 2, failed: 0 });
    await expectDebugFiles(env, run, [FILE]);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([{ sku: "0045210", upc: "0712345679021", cost: "4.03", msrp: "6.2", price: "5.84" }]));
    expect(await recordsHeader(env, run)).toEqual(expect.arrayContaining(["sku", "upc", "cost", "msrp", "price"]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("update,edit,713752E1,price,10.00,11.69");
    expect(plan).not.toMatch(/713752E2,(price|msrp),/);
    await expectNoChange(env, run, before);
    expect(await readFile(workbook)).toEqual(source);
  });

  it("live run: cost, msrp, upc and the marked-up price by sku; price-locked keeps price and msrp; the workbook stays", async () => {
    const run = await runSample(env, await loadSample("price-list-xlsx-storage.json"), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 6, row_errors: 0, update: 4, skipped: 2, failed: 0 });
    const items = await itemsBySku(env, ["713752E1", "713752E2", "0045210", "1200E10", "0045211", "0098000"]);
    expect(items.get("713752E1")).toMatchObject({ guid: "bn-713752E1", upc: "0712345679007", cost: "8.06", msrp: "12.4", price: "11.69" });
    expect(items.get("713752E2")).toMatchObject({ guid: "bn-713752E2", upc: "0712345679014", cost: "9.04", msrp: "20.00", price: "19.99" });
    expect(items.get("0045210")).toMatchObject({ guid: "bn-0045210", upc: "0712345679021", cost: "4.03", msrp: "6.2", price: "5.84" });
    expect(items.get("1200E10")).toMatchObject({ guid: "bn-1200E10", upc: "0712345679052", cost: "7.31", msrp: "9.75", price: "10.6" });
    expect(items.get("0045211")).toBeNull();
    expect(items.get("0098000")).toBeNull();
    // after_import defaults to keep.
    expect(await readdir(path.join(env.storageRoot, "pricelists"))).toEqual([FILE]);
    expect(await env.worker.env.store.getRun(run.id)).toMatchObject({ outcome: "success", counts: run.counts });
  });

  it("the markup is the parameter's: another value gives another price", async () => {
    const run = await runSample(env, await loadSample("price-list-xlsx-storage.json", { "price markup": "2" }), "prod");
    expect(run.outcome).toBe("success");
    const items = await itemsBySku(env, ["713752E1", "713752E2"]);
    expect(items.get("713752E1")).toMatchObject({ price: "16.12" });
    expect(items.get("713752E2")).toMatchObject({ price: "19.99" });
  });
});
