import { mkdir, mkdtemp, readFile, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadSettings, type Settings } from "../../../src/config.js";
import { parseAutomation, type Automation } from "../../../src/definition/index.js";
import { silentLogger } from "../../../src/log.js";
import { runAutomation, runFolder } from "../../../src/pipeline/run.js";
import { newCounter, type Order, type RequestCounter, type ServiceClient } from "../../../src/service/index.js";
import type { LogRecord, RunRecord } from "../../../src/state/index.js";
import { openWorker, type Worker } from "../../../src/worker.js";

/**
 * A worker on a temp data folder with the embedded service in-process
 * (limits raised so nothing is throttled), for order import runs: orders are
 * put in through the service's own API, feeds through the account's storage
 * (`sdsftp`), and the service is read back through the client.
 */
export interface OrderEnv {
  dir: string;
  settings: Settings;
  worker: Worker;
  client: ServiceClient;
  /** The account's storage root, where an `sdsftp` connection's path starts. */
  storageRoot: string;
  close(): Promise<void>;
}

export async function openOrderEnv(): Promise<OrderEnv> {
  const dir = await mkdtemp(path.join(tmpdir(), "conveyor-orders-"));
  const settings = loadSettings({
    cwd: dir,
    env: {
      CONVEYOR_DATA_DIR: path.join(dir, "data"),
      CONVEYOR_READ_LIMIT: "100000",
      CONVEYOR_WRITE_LIMIT: "100000",
      CONVEYOR_ALLOW_PRIVATE_HOSTS: "1",
      CONVEYOR_LOG_LEVEL: "silent",
    },
  });
  const worker = await openWorker(settings, silentLogger);
  const storageRoot = path.join(settings.storage, worker.env.account);
  await mkdir(storageRoot, { recursive: true });
  return {
    dir,
    settings,
    worker,
    client: worker.env.client,
    storageRoot,
    close: async () => {
      await worker.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function automationOf(raw: Record<string, unknown>): Automation {
  const parsed = parseAutomation(raw);
  if (!parsed.ok) throw new Error(`definition refused: ${JSON.stringify(parsed.problems)}`);
  return parsed.automation;
}

/** An orders import from `<storage>/orders/` with one file config. */
export function storageImport(slug: string, fileConfig: Record<string, unknown>): Automation {
  return automationOf({
    name: slug,
    slug,
    active: false,
    schedule: "0 * * * *",
    type: "orders",
    action: "import",
    connection: { type: "sdsftp", path: "orders" },
    file_configs: [{ min_age: 0, select: "latest", ...fileConfig }],
  });
}

/** Writes a feed into the storage folder, aged an hour so `min_age` never holds it back. */
export async function putFeed(env: OrderEnv, name: string, text: string): Promise<void> {
  const folder = path.join(env.storageRoot, "orders");
  await mkdir(folder, { recursive: true });
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, name);
  await writeFile(file, text);
  const t = new Date(Date.now() - 3_600_000);
  await utimes(file, t, t);
}

export interface RunOpts {
  diff?: boolean;
  force?: boolean;
}

export function run(env: OrderEnv, automation: Automation, mode: "debug" | "prod", opts: RunOpts = {}): Promise<RunRecord> {
  return runAutomation(env.worker.env, {
    key: automation.slug,
    automation,
    mode,
    trigger: "manual",
    diff: opts.diff ?? false,
    force: opts.force ?? false,
    notify: false,
    email: null,
    stabilityPollMs: 10,
  });
}

/** Creates an order through the service's API (one POST per order); returns its oid. */
export async function seedOrder(env: OrderEnv, order: Order): Promise<string> {
  const result = await env.client.createOrder(order);
  if (result.oid === undefined) throw new Error(`seeding ${JSON.stringify(order)} gave no oid`);
  return String(result.oid);
}

/** Every order, archived ones included, sorted by oid. */
export async function allOrders(env: OrderEnv): Promise<Order[]> {
  const out: Order[] = [];
  for await (const page of env.client.pageOrders({ sort: "oid", sortorder: "asc" })) out.push(...page);
  return out;
}

export async function orderByNumber(env: OrderEnv, ordernumber: string): Promise<Order> {
  const found = (await allOrders(env)).filter((o) => o.ordernumber === ordernumber);
  if (found.length !== 1) throw new Error(`${found.length} orders have ordernumber ${ordernumber}`);
  return found[0] as Order;
}

export function debugFolder(env: OrderEnv, record: RunRecord): string {
  return path.join(runFolder(env.settings.dataDir, record.id), "debug");
}

export async function readDebug(env: OrderEnv, record: RunRecord, name: string): Promise<string> {
  return readFile(path.join(debugFolder(env, record), name), "utf8");
}

export async function debugNames(env: OrderEnv, record: RunRecord): Promise<string[]> {
  return (await readdir(debugFolder(env, record))).sort();
}

/** A view of the account's client that counts what goes through it. */
export function counted(env: OrderEnv): { client: ServiceClient; counter: RequestCounter } {
  const counter = newCounter();
  return { client: env.client.withCounter(counter), counter };
}

/** The log records a run wrote (seed part 2.4 shape). */
export async function runLogs(env: OrderEnv, runId: string): Promise<LogRecord[]> {
  // job_id only refines a search field in the seed's log search: filter here.
  const page = await env.worker.env.store.searchLogs({ account: env.worker.env.account, records: 1000 });
  return page.logs.filter((l) => l.job_id === runId);
}
