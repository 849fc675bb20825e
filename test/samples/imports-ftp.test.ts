import { mkdir, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestFtpServer } from "../helpers/ftp-server.js";
import { debugRecords, expectDebugFiles, expectNoChange, recordsHeader, servicePicture } from "./expect-run.js";
import { filesContaining, itemsBySku, loadSample, openSampleEnv, placeSampleFile, readDebug, runSample, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * samples/catalogue-zip-ftp.json against a real FTP server: Northwind's
 * zipped windows-1252 TSV creates and lists new articles (`start`), edits
 * known ones, skips a blocked one and leaves a price the service already has.
 */
const PASSWORD = "northwind-ftp-Pw-7310";
const FILE = "catalogue_2026-03.zip";
const SKUS = ["0100245", "0100246", "0200310", "0200311", "0300077", "0300078", "0400900", "0400901"];

const SEED: Array<Record<string, string>> = [
  // No price yet: the service action `price:>0 → ignoreValue price` does not hold, so the calculated price is set.
  { guid: "nw-0100245", sku: "0100245", title: "Cafe mug (old title)", stock: "1", status: "Active" },
  // Has a price: the file's price is ignored, the rest is edited.
  { guid: "nw-0100246", sku: "0100246", title: "Cafe mug slate (old title)", price: "15.00", stock: "2", status: "Active" },
  // Blocked: skipped by the first service action, nothing changes.
  { guid: "nw-0300078", sku: "0300078", title: "Paring knife (blocked)", price: "45.00", stock: "3", status: "Blocked" },
];

describe("samples/catalogue-zip-ftp.json", () => {
  let env: SampleEnv;
  let server: TestFtpServer;
  let root: string;
  let remoteFile: string;

  beforeAll(async () => {
    env = await openSampleEnv();
    root = await mkdtemp(path.join(tmpdir(), "conveyor-ftp-northwind-"));
    await mkdir(path.join(root, "catalogue"));
    remoteFile = await placeSampleFile(`files/northwind/${FILE}`, path.join(root, "catalogue", FILE));
    server = await new TestFtpServer({ root, username: "dealer-0815", password: PASSWORD }).start();
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await server.close();
    await env.close();
    await rm(root, { recursive: true, force: true });
  });

  const sample = () =>
    loadSample("catalogue-zip-ftp.json", { "ftp host": "127.0.0.1", "ftp port": String(server.port), "ftp user": "dealer-0815", "ftp password": PASSWORD });

  it("debug run: plans five creates, two edits and one skip from the zipped windows-1252 TSV, changes nothing", async () => {
    const before = await servicePicture(env);
    const source = await readFile(remoteFile);
    const run = await runSample(env, await sample(), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 8, row_errors: 0, create: 5, update: 2, unchanged: 0, remove: 0, skipped: 1, failed: 0 });
    await expectDebugFiles(env, run, [FILE]);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([expect.objectContaining({ sku: "0200310", ean: "4006381333955", title: "Linen apron – Größe M", price: "44.1" })]));
    expect(await recordsHeader(env, run)).toEqual(expect.arrayContaining(["sku", "ean", "title", "price", "weight", "condition", "tags"]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("create,start,0200310,title,,Linen apron – Größe M");
    expect(plan).toContain("update,edit,0100245,price,,17.82");
    expect(plan).not.toMatch(/update,edit,0100246,price/);
    expect(plan).toMatch(/skipped,,0300078,,,skipped by service_actions\[0\]/);
    await expectNoChange(env, run, before);
    expect(await readFile(remoteFile)).toEqual(source);
  });

  it("live run: creates and lists the new articles, edits the known ones, keeps the blocked one and the file", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 8, row_errors: 0, create: 5, update: 2, unchanged: 0, remove: 0, skipped: 1, failed: 0 });
    expect(run.files).toEqual([expect.objectContaining({ name: FILE, size: 864 })]);

    const items = await itemsBySku(env, SKUS);
    expect(items.get("0200310")).toMatchObject({
      sku: "0200310",
      ean: "4006381333955",
      title: "Linen apron – Größe M",
      brand: "Northwind Textile",
      description: "Washed linen apron with pocket; adjustable strap",
      cost: "24.50",
      price: "44.1",
      msrp: "34.00",
      weight: "0.49",
      stock: "30",
      media1: "https://cdn.northwind.example/img/0200310.jpg",
      category1: "Kitchen > Textiles",
      condition: "New",
      tags: "northwind Natural M",
      listed: "1",
    });
    expect(items.get("0300077")).toMatchObject({ description: "Forged X50CrMoV15 steel, full tang – €5 of each sale to the food bank", price: "106.2", weight: "0.57" });
    expect(items.get("0400900")).toMatchObject({ title: "Crème brûlée set (4 ramekins + torch)", price: "71.82", weight: "2.98", listed: "1" });
    expect(items.get("0400901")).toMatchObject({ title: "Tarte tin Ø 28 cm", price: "30.42", weight: "1.06" });
    expect(items.get("0200311")).toMatchObject({ title: "Linen apron – Größe L", stock: "18" });
    // Known articles: edited in place under their own guid, price set only where the service had none.
    expect(items.get("0100245")).toMatchObject({ guid: "nw-0100245", title: "Café mug, stoneware", price: "17.82", cost: "9.90", stock: "64", weight: "0.9", tags: "northwind Cream 350 ml" });
    expect(items.get("0100246")).toMatchObject({ guid: "nw-0100246", title: "Café mug, stoneware", price: "15.00", cost: "9.90", stock: "12", tags: "northwind Slate 350 ml" });
    expect(items.get("0300078")).toMatchObject({ title: "Paring knife (blocked)", price: "45.00", stock: "3", status: "Blocked" });

    // after_import is not set: the file stays where it was.
    expect(await readdir(path.join(root, "catalogue"))).toEqual([FILE]);
    expect(await env.worker.env.store.getRun(run.id)).toMatchObject({ outcome: "success", counts: run.counts, files: run.files });
  });

  it("a second live run finds everything in place: no creates, the edits again, nothing failed", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.outcome).toBe("success");
    // Without diff_update a full run sends the mapped values again; the new articles are now updates.
    expect(run.counts).toMatchObject({ rows: 8, create: 0, update: 7, skipped: 1, failed: 0 });
  });

  it("no run record, debug file or database holds the FTP password", async () => {
    expect(await filesContaining(env.settings.dataDir, PASSWORD)).toEqual([]);
    const runs = await env.worker.env.store.listRuns({ automation: (await sample()).slug });
    expect(runs.length).toBe(3);
    expect(JSON.stringify(runs)).not.toContain(PASSWORD);
  });
});
