import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadSettings } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import type { ServiceClient } from "../../src/service/index.js";
import type { RunRecord } from "../../src/state/index.js";
import { openWorker, type Worker } from "../../src/worker.js";

/**
 * A data folder of its own for one crash scene: a `conveyor run` of a
 * definition file in a child process (killed at a fault point by
 * `CONVEYOR_FAULT`, as an OOM kill or a power cut would), and a worker in
 * the test's process to seed and read the embedded service over HTTP
 * between runs.
 */
export interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface Scene {
  dir: string;
  definition: string;
  slug: string;
  /** The storage folder the definition's connection reads. */
  feeds: string;
  cli(args: string[], env?: Record<string, string>): Promise<CliResult>;
  /** Opens a worker on the scene's data folder, runs `fn`, closes it: the CLI and the test never hold the service at once. */
  withWorker<T>(fn: (worker: Worker) => Promise<T>): Promise<T>;
  putFeed(name: string, text: string): void;
  /** The names in the feed folder, sorted. */
  feedNames(): string[];
}

const LIMITS = { CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", CONVEYOR_LOG_LEVEL: "silent" };

export function newScene(root: string, definition: { slug: string; connection: { path: string } } & Record<string, unknown>, env: Record<string, string> = {}): Scene {
  const dir = mkdtempSync(path.join(root, "scene-"));
  const dataDir = path.join(dir, "data");
  const vars = { CONVEYOR_DATA_DIR: dataDir, ...LIMITS, ...env };
  const file = path.join(dir, `${definition.slug}.json`);
  writeFileSync(file, JSON.stringify(definition));
  const feeds = path.join(dataDir, "storage", "demo", definition.connection.path);
  mkdirSync(feeds, { recursive: true });
  return {
    dir,
    definition: file,
    slug: definition.slug,
    feeds,
    cli: (args, extra = {}) => cli(args, { ...vars, ...extra }),
    async withWorker(fn) {
      const worker = await openWorker(loadSettings({ cwd: dir, env: vars }), silentLogger);
      try {
        return await fn(worker);
      } finally {
        await worker.close();
      }
    },
    putFeed(name, text) {
      const target = path.join(feeds, name);
      writeFileSync(target, text);
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(target, hourAgo, hourAgo);
    },
    feedNames: () => readdirSync(feeds).sort(),
  };
}

export function newRoot(): string {
  return mkdtempSync(path.join(tmpdir(), "conveyor-crash-"));
}

function cli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; signal?: string }) | null;
      resolve({ code: e ? (typeof e.code === "number" ? e.code : null) : 0, signal: e?.signal ?? null, stdout, stderr });
    });
  });
}

/** The scene's one run left open by the killed process, as the next start marks it. */
export async function interruptedRun(worker: Worker, slug: string): Promise<RunRecord> {
  await worker.env.store.markInterrupted(new Date(Date.now() + 60_000));
  const [run] = await worker.env.store.listRuns({ automation: slug });
  if (!run) throw new Error(`no run of ${slug}`);
  return run;
}

/** Every product of the service, read over HTTP: the fields a run sets, by guid. */
export async function productCatalogue(client: ServiceClient, fields: readonly string[]): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = [];
  for await (const page of client.pageItems({ sort: "guid" })) {
    for (const item of page) out.push(Object.fromEntries(["guid", ...fields].map((f) => [f, item[f] ?? ""])));
  }
  return out.sort((a, b) => (a.guid ?? "").localeCompare(b.guid ?? ""));
}

/** Every order of the service, read over HTTP, without what the service stamps on it (oid, dates). */
export async function orderCatalogue(client: ServiceClient): Promise<unknown[]> {
  const out: Array<{ ordernumber: string; [key: string]: unknown }> = [];
  for await (const page of client.pageOrders({ sort: "oid", sortorder: "asc" })) {
    for (const order of page) {
      const items = Array.isArray(order.items) ? (order.items as Array<Record<string, unknown>>).map((i) => ({ sku: i.sku, quantity: String(i.quantity) })) : [];
      out.push({ ordernumber: String(order.ordernumber), channel: order.channel, total: String(order.total), status: order.status, items });
    }
  }
  return out.sort((a, b) => a.ordernumber.localeCompare(b.ordernumber));
}
