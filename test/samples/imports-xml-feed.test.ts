import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeedServer } from "../helpers/http-feed-server.js";
import { debugRecords, expectDebugFiles, expectNoChange, recordsHeader, servicePicture } from "./expect-run.js";
import { filesContaining, itemsBySku, loadSample, openSampleEnv, readDebug, runSample, SAMPLES, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/xml-feed-http.json against a real HTTP server on loopback behind
 * basic auth: one <item> per article, XPath mapping, gross price = net × 1.19.
 */
const USER = "dealer-2231";
const PASSWORD = "lumen-feed-Pw-9034";
const SKUS = ["0500100", "0500101", "0500230", "05002E10"];

const SEED: Array<Record<string, string>> = [
  { guid: "lu-0500100", sku: "0500100", title: "LED panel (old title)", brand: "Lumen", price: "50.00", stock: "7", ean: "4006381334013" },
  { guid: "lu-05002E10", sku: "05002E10", title: "Exit sign (old title)", brand: "Lumen Safety", price: "80.00", stock: "2" },
];

describe("samples/xml-feed-http.json", () => {
  let env: SampleEnv;
  let feed: FeedServer;
  let xml: Buffer;

  beforeAll(async () => {
    env = await openSampleEnv();
    xml = await readFile(path.join(SAMPLES, "files/feeds/products.xml"));
    feed = new FeedServer();
    const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;
    feed.routes.set("/dealer/products.xml", (req, res) => {
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="dealer"' }).end("unauthorized");
        return;
      }
      res.writeHead(200, { "content-type": "application/xml" }).end(xml);
    });
    await feed.start();
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await feed.stop();
    await env.close();
  });

  const sample = (password = PASSWORD) =>
    loadSample("xml-feed-http.json", { "feed url": `${feed.base}/dealer/products.xml`, "feed user": USER, "feed password": password });

  it("debug run: downloads the feed with basic auth, plans two adds and two edits, changes nothing", async () => {
    const before = await servicePicture(env);
    feed.seen.length = 0;
    const run = await runSample(env, await sample(), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 4, row_errors: 0, create: 2, update: 2, unchanged: 0, remove: 0, skipped: 0, failed: 0 });
    expect(feed.seen.map((r) => r.method)).toEqual(["GET"]);
    await expectDebugFiles(env, run, ["products.xml"]);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([expect.objectContaining({ sku: "05002E10", ean: "4006381334044", price: "85.68", stock: "0" })]));
    expect(await readFile(path.join(env.settings.dataDir, "runs", run.id, "debug", "source", "products.xml"))).toEqual(xml);
    expect(await recordsHeader(env, run)).toEqual(expect.arrayContaining(["sku", "ean", "title", "price", "stock", "category1"]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("update,edit,0500100,price,50.00,58.19");
    expect(plan).toContain("create,add,0500230,stock,,0");
    await expectNoChange(env, run, before);
  });

  it("live run: gross prices, stock from availability/quantity, CDATA text kept, 05002E10 stays text", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 4, row_errors: 0, create: 2, update: 2, failed: 0 });
    const items = await itemsBySku(env, SKUS);
    expect(items.get("0500100")).toMatchObject({
      guid: "lu-0500100",
      ean: "4006381334013",
      title: "LED panel 60x60, 36 W, 4000 K",
      brand: "Lumen",
      description: "Flat panel for suspended ceilings, 3,600 lm, <b>flicker-free</b> driver",
      price: "58.19",
      stock: "120",
      category1: "Lighting > Panels",
    });
    expect(items.get("0500101")).toMatchObject({ sku: "0500101", description: 'Flat panel, 3,500 lm, "UGR<19" optic', price: "65.33", stock: "64", listed: "0" });
    expect(items.get("0500230")).toMatchObject({ sku: "0500230", title: "Track spot, black, GU10", description: "Rotates 350°, tilts 90°; lamp not included", price: "23.21", stock: "0" });
    expect(items.get("05002E10")).toMatchObject({ guid: "lu-05002E10", sku: "05002E10", brand: "Lumen Safety", price: "85.68", stock: "0", category1: "Lighting > Emergency" });
    expect(await env.worker.env.store.getRun(run.id)).toMatchObject({ outcome: "success", counts: run.counts });
  });

  it("a wrong password fails the run without writing and without the password in the error", async () => {
    const before = await servicePicture(env);
    const wrong = "lumen-wrong-Pw-1177";
    const run = await runSample(env, await sample(wrong), "prod");
    expect(run.outcome).toBe("failed");
    expect(run.error?.message).toMatch(/401/);
    expect(JSON.stringify(run)).not.toContain(wrong);
    expect(await servicePicture(env)).toEqual(before);
  });

  it("no run record, debug file or database holds the feed password", async () => {
    expect(await filesContaining(env.settings.dataDir, PASSWORD)).toEqual([]);
    expect(await filesContaining(env.settings.dataDir, Buffer.from(`${USER}:${PASSWORD}`).toString("base64"))).toEqual([]);
    const runs = await env.worker.env.store.listRuns({ automation: (await sample()).slug });
    expect(runs.length).toBe(3);
    expect(JSON.stringify(runs)).not.toContain(PASSWORD);
  });
});
