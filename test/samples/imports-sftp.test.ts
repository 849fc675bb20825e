import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSftpServer } from "../helpers/sftp-server.js";
import { filesContaining, itemsBySku, loadSample, openSampleEnv, placeSampleFile, readDebug, runSample, seedProducts, type SampleEnv } from "./sample-env.js";
import { debugRecords, expectDebugFiles, expectNoChange, servicePicture } from "./expect-run.js";

/**
 * samples/supplier-stock-sftp.json against a real SFTP server: Acme's nightly
 * inventory (UTF-8 with BOM, CRLF) updates stock and cost of Acme products by
 * sku, ends the listing of Acme products missing from the file, and moves the
 * file to processed/ once applied.
 */
const PASSWORD = "acme-sftp-Pw-5521";
const FILE = "inventory_20260301.csv";

// In the service before the run: guids differ from skus, so matching by sku is what is tested.
const SEED: Array<Record<string, string>> = [
  // Same stock and cost as the file: live diff (diff_update) leaves it alone.
  { guid: "acme-000123", sku: "000123", title: "Hose clamp 1/2", brand: "Acme", stock: "148", cost: "3.42", price: "7.99" },
  { guid: "acme-000124", sku: "000124", title: "Hose clamp 3/4", brand: "Acme", stock: "10", cost: "3.50", price: "8.99" },
  // brand:Acme is "contains": Acme Pro is in scope too.
  { guid: "acme-000480", sku: "000480", title: "Cordless drill", brand: "Acme Pro", stock: "3", cost: "61.10", price: "129.00" },
  { guid: "acme-000481", sku: "000481", title: "Impact driver", brand: "Acme Pro", stock: "5", cost: "48.75", price: "99.00" },
  { guid: "acme-001002", sku: "001002", title: "Shop towels", brand: "Acme", stock: "1000", cost: "8.15" },
  { guid: "acme-001003", sku: "001003", title: "Nitrile gloves", brand: "Acme", stock: "310", cost: "6.00" },
  { guid: "acme-004410", sku: "004410", title: "Safety glasses", brand: "Acme", stock: "70", cost: "2.05" },
  { guid: "acme-007001", sku: "007001", title: "Extension cord 25", brand: "Acme", stock: "22", cost: "18.60" },
  { guid: "acme-007002", sku: "007002", title: "Extension cord 50", brand: "Acme", stock: "0", cost: "31.25" },
  { guid: "acme-009999", sku: "009999", title: "Pipe wrench", brand: "Acme", stock: "3", cost: "14.00" },
  { guid: "acme-010250", sku: "010250", title: "Utility knife", brand: "Acme", stock: "100", cost: "4.10" },
  // 010251 is in the file but not in the service: no create is configured, so it is skipped.
  // An Acme product the file no longer lists: its listing is ended (1 of 12 in scope, under the 10 % limit).
  { guid: "acme-006000", sku: "006000", title: "Old clamp", brand: "Acme", stock: "4", cost: "1.00", action: "start" },
  // Not Acme: out of scope, never touched although the file does not list it.
  { guid: "other-1", sku: "770001", title: "Other brand drill", brand: "Makita", stock: "9", cost: "70.00", action: "start" },
];

describe("samples/supplier-stock-sftp.json", () => {
  let env: SampleEnv;
  let server: TestSftpServer;
  let root: string;
  let remoteFile: string;

  beforeAll(async () => {
    env = await openSampleEnv();
    root = await mkdtemp(path.join(tmpdir(), "conveyor-sftp-acme-"));
    await mkdir(path.join(root, "outgoing"));
    remoteFile = await placeSampleFile(`files/acme/${FILE}`, path.join(root, "outgoing", FILE));
    server = await new TestSftpServer({ root, username: "merchant-4711", password: PASSWORD }).start();
    await seedProducts(env, SEED);
  });

  afterAll(async () => {
    await server.close();
    await env.close();
    await rm(root, { recursive: true, force: true });
  });

  const sample = () =>
    loadSample("supplier-stock-sftp.json", { "sftp host": "127.0.0.1", "sftp port": String(server.port), "sftp user": "merchant-4711", "sftp password": PASSWORD });

  it("debug run: plans the stock and cost updates and the one removal, writes the debug files, changes nothing", async () => {
    const before = await servicePicture(env);
    const sourceBytes = await readFile(remoteFile);
    const run = await runSample(env, await sample(), "debug");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    // 12 rows; 000123, 007001 and 009999 already hold the file's values; 010251 is not in the service; 006000 is ended.
    expect(run.counts).toMatchObject({ rows: 12, row_errors: 0, create: 0, update: 8, unchanged: 3, remove: 1, skipped: 1, failed: 0 });
    // No host_key in the sample: the key the server offered was accepted, and the run records it.
    expect(run.connection).toEqual({ host_key: server.fingerprint });
    await expectDebugFiles(env, run, [FILE]);
    expect(await debugRecords(env, run)).toEqual(expect.arrayContaining([{ sku: "000123", stock: "148", cost: "3.42" }, { sku: "010251", stock: "58", cost: "11.30" }]));
    const plan = await readDebug(env, run, "plan.csv");
    expect(plan).toContain("update,edit,000124,stock,10,96");
    expect(plan).toContain("update,edit,000124,cost,3.50,3.88");
    expect(plan).toContain("remove,end,006000");
    expect(plan).not.toContain("770001");
    const bulk = await readDebug(env, run, "bulk-1.csv");
    expect(bulk.split(/\r?\n/)[0]).toBe("action,sku,stock,cost");
    expect(await readFile(path.join(env.dir, "data", "runs", run.id, "debug", "source", FILE))).toEqual(sourceBytes);
    await expectNoChange(env, run, before);
    expect(await readFile(remoteFile)).toEqual(sourceBytes);
  });

  it("live run: sets stock and cost by sku, ends the missing Acme product, moves the file to processed/", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.error).toBeNull();
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ rows: 12, row_errors: 0, create: 0, update: 8, unchanged: 3, remove: 1, skipped: 1, failed: 0 });
    expect(run.requests.write).toBeGreaterThan(0);
    expect(run.files).toEqual([expect.objectContaining({ name: FILE, size: 1736 })]);

    const items = await itemsBySku(env, ["000123", "000124", "000480", "000481", "001002", "001003", "004410", "007001", "007002", "009999", "010250", "010251", "006000", "770001"]);
    const expected: Record<string, [string, string]> = {
      "000123": ["148", "3.42"],
      "000124": ["96", "3.88"],
      "000480": ["12", "61.10"],
      "000481": ["0", "48.75"],
      "001002": ["1204", "8.15"],
      "001003": ["310", "6.40"],
      "004410": ["75", "2.05"],
      "007001": ["22", "18.60"],
      "007002": ["9", "31.25"],
      "009999": ["3", "14.00"],
      "010250": ["140", "4.10"],
    };
    for (const [sku, [stock, cost]] of Object.entries(expected)) {
      expect(items.get(sku), sku).toMatchObject({ sku, guid: `acme-${sku}`, stock, cost });
    }
    // Fields the file does not map stay as they were.
    expect(items.get("000124")).toMatchObject({ title: "Hose clamp 3/4", price: "8.99", brand: "Acme" });
    expect(items.get("010251")).toBeNull();
    expect(items.get("006000")).toMatchObject({ listed: "0", stock: "4" });
    expect(items.get("770001")).toMatchObject({ listed: "1", stock: "9", cost: "70.00" });

    expect(existsSync(remoteFile)).toBe(false);
    expect(existsSync(path.join(root, "outgoing", "processed", FILE))).toBe(true);

    const stored = await env.worker.env.store.getRun(run.id);
    expect(stored).toMatchObject({ outcome: "success", counts: run.counts });
  });

  it("a second live run finds no file and fails as require_file (select: latest) says, naming what is there", async () => {
    const run = await runSample(env, await sample(), "prod");
    expect(run.outcome).toBe("failed");
    expect(run.error?.code).toBe("file_missing");
  });

  it("more Acme products missing than remove_limit (10 %) allows: the run stops before writing and keeps the file", async () => {
    await seedProducts(env, [
      { guid: "acme-006001", sku: "006001", title: "Old clamp 2", brand: "Acme", stock: "1", action: "start" },
      { guid: "acme-006002", sku: "006002", title: "Old clamp 3", brand: "Acme", stock: "1", action: "start" },
    ]);
    remoteFile = await placeSampleFile(`files/acme/${FILE}`, path.join(root, "outgoing", FILE));
    const before = await servicePicture(env);
    const run = await runSample(env, await sample(), "prod");
    expect(run.outcome).toBe("failed");
    // 006000, 006001 and 006002 are missing: 3 of the 14 Acme products in scope.
    expect(run.guard).toMatchObject({ name: "remove_limit", message: expect.stringMatching(/3.*14|10 ?%/) });
    expect(run.counts.remove).toBe(3);
    expect(await servicePicture(env)).toEqual(before);
    expect(existsSync(remoteFile)).toBe(true);
  });

  it("no run record, debug file or database holds the SFTP password", async () => {
    expect(await filesContaining(env.settings.dataDir, PASSWORD)).toEqual([]);
    const runs = await env.worker.env.store.listRuns({ automation: (await sample()).slug });
    expect(runs.length).toBe(4);
    expect(JSON.stringify(runs)).not.toContain(PASSWORD);
  });
});
