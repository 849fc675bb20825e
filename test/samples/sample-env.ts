import { cp, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadSettings, type Settings } from "../../src/config.js";
import { loadAutomationFile, type Automation } from "../../src/definition/index.js";
import { silentLogger } from "../../src/log.js";
import { runAutomation, runFolder } from "../../src/pipeline/run.js";
import type { Item } from "../../src/service/index.js";
import type { RunRecord } from "../../src/state/index.js";
import { openWorker, type Worker } from "../../src/worker.js";

/**
 * A fresh worker on a temp data folder with the embedded service, for running
 * the shipped sample automations unchanged except for their parameters (the
 * servers they name are the loopback servers of the test).
 */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const SAMPLES = path.join(REPO, "samples");

export interface SampleEnv {
  dir: string;
  settings: Settings;
  worker: Worker;
  /** The account's storage root (`<storage>/<API user>/`), where sdsftp and sds3 paths start. */
  storageRoot: string;
  close(): Promise<void>;
}

/** The worker's environment for a sample run: the CLI test gives a child process the same. */
export function sampleEnvVars(dir: string): Record<string, string> {
  return {
    CONVEYOR_DATA_DIR: path.join(dir, "data"),
    CONVEYOR_READ_LIMIT: "100000",
    CONVEYOR_WRITE_LIMIT: "100000",
    CONVEYOR_ALLOW_PRIVATE_HOSTS: "1",
    CONVEYOR_LOG_LEVEL: "silent",
  };
}

export function sampleSettings(dir: string): Settings {
  return loadSettings({ cwd: dir, env: sampleEnvVars(dir) });
}

export async function openSampleEnv(): Promise<SampleEnv> {
  const dir = await mkdtemp(path.join(tmpdir(), "conveyor-samples-"));
  const env = await openSampleEnvAt(dir);
  return {
    ...env,
    close: async () => {
      await env.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A worker on the data folder under `dir`, which outlives it: a CLI process can use the same data after close. */
export async function openSampleEnvAt(dir: string): Promise<SampleEnv> {
  const settings = sampleSettings(dir);
  const worker = await openWorker(settings, silentLogger);
  const storageRoot = path.join(settings.storage, worker.env.account);
  await mkdir(storageRoot, { recursive: true });
  return { dir, settings, worker, storageRoot, close: () => worker.close() };
}

/** A sample definition as shipped, with the given parameter values set. */
export async function loadSample(file: string, params: Record<string, string> = {}): Promise<Automation> {
  const automation = await loadAutomationFile(path.join(SAMPLES, file));
  for (const [name, value] of Object.entries(params)) {
    const param = automation.parameters.find((p) => p.name === name);
    if (!param) throw new Error(`${file} has no parameter "${name}"`);
    param.value = value;
  }
  return automation;
}

export function runSample(env: SampleEnv, automation: Automation, mode: "debug" | "prod"): Promise<RunRecord> {
  return runAutomation(env.worker.env, {
    key: automation.slug,
    automation,
    mode,
    trigger: "manual",
    diff: false,
    force: false,
    notify: false,
    email: null,
    stabilityPollMs: 10,
  });
}

/** Sets a file's times an hour back, so `min_age` does not hold it back. */
export async function age(file: string, seconds = 3600): Promise<void> {
  const t = new Date(Date.now() - seconds * 1000);
  await utimes(file, t, t);
}

/** Copies `samples/<from>` (or an absolute `from`) to `<to>` and ages it. */
export async function placeSampleFile(from: string, to: string): Promise<string> {
  await mkdir(path.dirname(to), { recursive: true });
  await cp(path.resolve(SAMPLES, from), to);
  await age(to);
  return to;
}

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * Puts products into the embedded service with one bulk file, the way an
 * integrator fills it: `add`, or the product's own `action` (`start` lists it).
 */
export async function seedProducts(env: SampleEnv, products: ReadonlyArray<Record<string, string>>): Promise<void> {
  const columns = [...new Set(products.flatMap((p) => Object.keys(p)).filter((c) => c !== "guid" && c !== "action"))];
  const lines = [["action", "guid", ...columns].join(",")];
  for (const p of products) lines.push([p.action ?? "add", p.guid ?? "", ...columns.map((c) => p[c] ?? "")].map(csvCell).join(","));
  const file = path.join(env.dir, `seed-${Date.now()}.csv`);
  await writeFile(file, `${lines.join("\n")}\n`);
  const client = env.worker.env.client;
  const submitted = await client.submitBulk(file, { name: `seed-${Date.now()}` });
  const status = await client.waitBulk(submitted.bulk_file, { pollMs: 20 });
  if (status.status !== "complete" || status.failed !== 0 || status.succeeded !== products.length) {
    throw new Error(`seeding failed: ${JSON.stringify(status)}`);
  }
}

/** Every item of the service with every field, sorted by guid: the before/after picture. */
export async function allItems(env: SampleEnv): Promise<Item[]> {
  const out: Item[] = [];
  for await (const page of env.worker.env.client.pageItems()) out.push(...page);
  return out.sort((a, b) => (a.guid ?? "").localeCompare(b.guid ?? ""));
}

/** Bulk import jobs the service has received today: a debug run must add none. */
export async function bulkJobCount(env: SampleEnv): Promise<number> {
  return (await env.worker.env.client.bulkJobs(new Date().toISOString().slice(0, 10))).length;
}

/** Items by sku, read back one by one through the client (the v1 edit endpoint). */
export async function itemsBySku(env: SampleEnv, skus: readonly string[]): Promise<Map<string, Item | null>> {
  const out = new Map<string, Item | null>();
  for (const sku of skus) out.set(sku, await env.worker.env.client.getItem({ sku }));
  return out;
}

export function debugFolder(env: SampleEnv, run: RunRecord): string {
  return path.join(runFolder(env.settings.dataDir, run.id), "debug");
}

export async function readDebug(env: SampleEnv, run: RunRecord, name: string): Promise<string> {
  return readFile(path.join(debugFolder(env, run), name), "utf8");
}

/** Every file under `dir`, recursively, as absolute paths. */
export async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out;
}

/**
 * The files of the data folder (run records, debug files, the state database
 * and its WAL, the embedded service's data) that contain `secret` as bytes.
 */
export async function filesContaining(dir: string, secret: string): Promise<string[]> {
  const needle = Buffer.from(secret);
  const hits: string[] = [];
  for (const file of await walk(dir)) {
    const bytes = await readFile(file).catch(() => Buffer.alloc(0));
    if (bytes.includes(needle)) hits.push(path.relative(dir, file));
  }
  return hits;
}
