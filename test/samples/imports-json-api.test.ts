import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeedServer } from "../helpers/http-feed-server.js";
import { debugRecords, expectDebugFiles, expectNoChange, recordsHeader, servicePicture } from "./expect-run.js";
import { filesContaining, itemsBySku, loadSample, openSampleEnv, readDebug, runSample, SAMPLES, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/json-api-http.json against a real HTTP server on loopback playing
 * Acme's catalogue API: bearer token in the Authorization header, GET with
 * the payload as query string, JSONPath mapping, Acme Pro mapped to Acme.
 */
const TOKEN = "acme-api-Tok-4410-secret";
const SKUS = ["000480", "000481", "713752E1", "0045210"];

const SEED: Array<Record<string, string>> = [
  { guid: "acme-000480", sku: "000480", title: "Drill (old title)", brand: "Acme", price: "120.00", stock: "3", upc: "" },
  { guid: "bn-713752E1", sku: "713752E1", title: "Hex bolt (old title)", brand: "Bolt & Nut", price: "11.00", stock: "5", cost: "8.06" },
];

describe("samples/json-api-http.json", () => {
  let env: SampleEnv;
  let api: FeedServer;
  let body: string;

  beforeAll(async () => {
    env = await openSampleEnv();
    body = await readFile(path.join(SAMPLES, "files/api/products.json"), "utf8");
    api = new FeedServer();
    api.routes.set("/v2/catalog/products", (req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"invalid token"}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(body);
    });
    await api.start();
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await api.stop();
    await env.close();
  });

  const sample = (token = TOKEN) => loadSample("json-api-http.json", { "api url": `${api.base}/v2/catalog/products`, "api token": token });

  it("debug run: one authorized GET with the payload as query, two creates and two edits planned, nothing changed", async () => {
    const before = await servicePicture(env);
    api.seen.length = 0;
    const run = await runSample(env, await sample(), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 4, row_errors: 0, create: 2, update: 2, unchanged: 0, remove: 0, skipped: 0, failed: 0 });
    expect(api.seen).toHaveLength(1);
    const url = new URL(api.seen[0]?.url ?? "", api.base);
    expect(api.seen[0]?.method).toBe("GET");
    expect(url.searchParams.get("per_page")).toBe("100");
    expect(url.searchParams.get("updated_since")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const source = run.debug_files.find((f) => f.startsWith("source/"));
    expect(source).toBeDefined();
    await expectDebugFiles(env, run, [path.basename(source ?? "")]);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([expect.objectContaining({ sku: "0045210", upc: "0712345679021", brand: "Bolt & Nut", stock: "310" })]));
    expect(await recordsHeader(env, run)).toEqual(expect.arrayContaining(["sku", "title", "brand", "price", "stock", "upc"]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("create,add,000481,brand,,Acme");
    expect(plan).toContain("update,edit,713752E1,price,11.00,12.40");
    await expectNoChange(env, run, before);
  });

  it("live run: adds the new articles, edits the known ones, identifiers and barcodes stay text", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 4, row_errors: 0, create: 2, update: 2, failed: 0 });
    const items = await itemsBySku(env, SKUS);
    expect(items.get("000480")).toMatchObject({ guid: "acme-000480", title: "Cordless drill 18V, 2 batteries, case", brand: "Acme", price: "129.00", stock: "12", upc: "0712345678925" });
    // create: add, not start: the new article is not listed.
    expect(items.get("000481")).toMatchObject({ sku: "000481", title: "Impact driver 18V, bare tool", brand: "Acme", price: "99.00", stock: "0", upc: "0712345678932", listed: "0" });
    expect(items.get("713752E1")).toMatchObject({ guid: "bn-713752E1", title: 'Hex bolt M8x40, zinc, DIN 933 "bulk"', brand: "Bolt & Nut", price: "12.40", stock: "1204", upc: "0712345679007", cost: "8.06" });
    expect(items.get("0045210")).toMatchObject({ sku: "0045210", title: "Nyloc nut M8, zinc, DIN 985", price: "6.20", stock: "310", upc: "0712345679021" });
    expect(await env.worker.env.store.getRun(run.id)).toMatchObject({ outcome: "success", counts: run.counts });
  });

  it("a wrong token fails the run with the API's refusal and writes nothing", async () => {
    const before = await servicePicture(env);
    const run = await runSample(env, await sample("wrong-token"), "prod");
    expect(run.outcome).toBe("failed");
    expect(run.error?.message).toMatch(/401/);
    expect(await servicePicture(env)).toEqual(before);
  });

  it("no run record, debug file or database holds the API token", async () => {
    expect(await filesContaining(env.settings.dataDir, TOKEN)).toEqual([]);
    const runs = await env.worker.env.store.listRuns({ automation: (await sample()).slug });
    expect(runs.length).toBe(3);
    expect(JSON.stringify(runs)).not.toContain(TOKEN);
  });
});
