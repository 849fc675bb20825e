import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Item } from "../../src/service/index.js";
import { itemsBySku, openSampleEnvAt, placeSampleFile, REPO, sampleEnvVars, seedProducts, type SampleEnv } from "./sample-env.js";

/**
 * `conveyor run <sample> [--debug] --json` in a child process, as a shell
 * script runs it: one JSON object on stdout and the exit code of runs.md
 * (0 success or nothing, 1 failed, 3 partial). The storage samples run as
 * shipped, with no parameter to set.
 */
const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXED = "STOCK_20260301.TXT";
const FIXED_NEXT = "STOCK_20260302.TXT";

interface CliResult {
  code: number | null;
  json: Record<string, unknown> & { counts: Record<string, number>; files: Array<{ name: string; size: number; sha256: string }>; debug_files: string[] };
  stdout: string;
  stderr: string;
}

function conveyorRun(dir: string, args: string[]): Promise<CliResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CONVEYOR_")) env[k] = v;
  Object.assign(env, sampleEnvVars(dir));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "run", ...args, "--json"], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({ code, json: JSON.parse(stdout) as CliResult["json"], stdout, stderr });
      } catch {
        reject(new Error(`stdout is not one JSON object (exit ${code}): ${stdout}\n${stderr}`));
      }
    });
  });
}

describe("conveyor run on the storage samples (CLI, --json)", () => {
  let dir: string;
  let storageRoot: string;

  /** The service as a fresh worker on the same data folder sees it, between CLI runs. */
  async function withService<T>(fn: (env: SampleEnv) => Promise<T>): Promise<T> {
    const env = await openSampleEnvAt(dir);
    try {
      return await fn(env);
    } finally {
      await env.close();
    }
  }
  const fixedItems = (): Promise<Map<string, Item | null>> => withService((env) => itemsBySku(env, ["0000012345", "0000480000", "713752E1", "0045210", "1200E10"]));

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "conveyor-samples-cli-"));
    storageRoot = await withService(async (env) => {
      await seedProducts(env, [
        { guid: "bn-12345", sku: "0000012345", title: "Hose clamp", stock: "1", cost: "3.00" },
        { guid: "bn-480000", sku: "0000480000", title: "Cordless drill kit", stock: "1", cost: "60.00" },
        { guid: "bn-713752E1", sku: "713752E1", title: "Hex bolt M8x40", stock: "1", cost: "8.00" },
        { guid: "bn-0045210", sku: "0045210", title: "Nyloc nut M8", stock: "1", cost: "4.00" },
        { guid: "bn-1200E10", sku: "1200E10", title: "Threaded rod M10", stock: "1", cost: "7.00" },
      ]);
      return env.storageRoot;
    });
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a sample whose folder or file is not there: exit 1, outcome failed, an error that says what is missing", async () => {
    const noFolder = await conveyorRun(dir, ["samples/price-list-xlsx-storage.json"]);
    expect(noFolder.code).toBe(1);
    expect(noFolder.json).toMatchObject({ mode: "prod", trigger: "manual", outcome: "failed", error: { code: "not_found", message: expect.stringContaining("pricelists") } });
    expect(noFolder.stdout.trim().split("\n")).toHaveLength(1);

    await mkdir(path.join(storageRoot, "pricelists"), { recursive: true });
    await writeFile(path.join(storageRoot, "pricelists", "readme.txt"), "prices come monthly\n");
    const noFile = await conveyorRun(dir, ["samples/price-list-xlsx-storage.json"]);
    expect(noFile.code).toBe(1);
    expect(noFile.json).toMatchObject({ outcome: "failed", error: { code: "file_missing", message: expect.stringContaining("readme.txt") } });
  });

  it("--debug: exit 0, the run record with counts, the file's sha256 and the debug files; the service unchanged", async () => {
    const feed = await placeSampleFile(`storage/feeds/mainframe/${FIXED}`, path.join(storageRoot, "feeds", "mainframe", FIXED));
    const before = await fixedItems();
    const res = await conveyorRun(dir, ["samples/fixed-width-storage.json", "--debug"]);
    expect(res.code).toBe(0);
    const sha256 = createHash("sha256").update(await readFile(feed)).digest("hex");
    expect(res.json).toMatchObject({
      automation: "bolt-nut-mainframe-stock-extract",
      mode: "debug",
      diff: false,
      outcome: "success",
      counts: { rows: 8, row_errors: 0, create: 0, update: 5, unchanged: 0, remove: 0, skipped: 3, failed: 0 },
      requests: { write: 1 },
      files: [{ name: FIXED, size: 633, sha256 }],
    });
    expect(res.json.debug_files).toEqual(expect.arrayContaining(["summary.json", "plan.csv", "bulk-1.csv", "records.csv", `source/${FIXED}`]));
    expect(await fixedItems()).toEqual(before);
    expect(existsSync(feed)).toBe(true);
  });

  it("live: exit 0, stock and cost by sku in the service, the file moved to done/", async () => {
    const res = await conveyorRun(dir, ["samples/fixed-width-storage.json"]);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ mode: "prod", outcome: "success", counts: { rows: 8, update: 5, skipped: 3, failed: 0 } });
    const items = await fixedItems();
    expect(items.get("0000012345")).toMatchObject({ guid: "bn-12345", stock: "148", cost: "3.42", warehouse: "Bolt & Nut (mainframe)" });
    expect(items.get("713752E1")).toMatchObject({ guid: "bn-713752E1", stock: "1204", cost: "8.06" });
    expect(existsSync(path.join(storageRoot, "feeds", "mainframe", "done", FIXED))).toBe(true);
  });

  it("a next extract with one bad quantity: exit 3, outcome partial, the good rows applied, the bad line in errors.csv", async () => {
    await placeSampleFile(path.join(HERE, "fixtures", FIXED_NEXT), path.join(storageRoot, "feeds", "mainframe", FIXED_NEXT));
    const res = await conveyorRun(dir, ["samples/fixed-width-storage.json"]);
    expect(res.code).toBe(3);
    // 1 of 5 rows fails, under the sample's error_limit of 25 %: the rest is applied.
    expect(res.json).toMatchObject({ outcome: "partial", counts: { rows: 5, row_errors: 1, update: 4, failed: 0 }, files: [{ name: FIXED_NEXT }] });
    expect(res.json.debug_files).toEqual(expect.arrayContaining(["errors.csv", "summary.json"]));
    const errors = await readFile(path.join(dir, "data", "runs", String(res.json.id), "debug", "errors.csv"), "utf8");
    expect(errors).toMatch(/^line,identifier,message\r?\n3,/);
    expect(errors).toContain("stock");
    const items = await fixedItems();
    expect(items.get("0000012345")).toMatchObject({ stock: "150", cost: "3.45" });
    expect(items.get("1200E10")).toMatchObject({ stock: "20", cost: "7.40" });
    // The bad line changed nothing.
    expect(items.get("0000480000")).toMatchObject({ stock: "12", cost: "61.10" });
    expect(existsSync(path.join(storageRoot, "feeds", "mainframe", "done", FIXED_NEXT))).toBe(true);
  });

  it("nothing new: exit 0, outcome nothing", async () => {
    const res = await conveyorRun(dir, ["samples/fixed-width-storage.json"]);
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ outcome: "nothing", counts: { rows: 0 }, files: [] });
    // The moved extract left the folder: the note says why there was nothing to do.
    expect(res.json.note).toMatch(/^file_configs\[0\]: no file to import: /);
  });
});
