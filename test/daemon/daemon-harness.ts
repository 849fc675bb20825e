import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadSettings, type Settings } from "../../src/config.js";
import { startDaemon, type Daemon, type DaemonOptions } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/log.js";

/** Products the test feeds change: guid = `g-<sku>`. */
export const PRODUCTS_CSV = ["guid,sku,title,stock,cost", "g-A1,A1,Alpha,1,1.00", "g-B2,B2,Bravo,2,2.00", "g-C3,C3,Charlie,3,3.00"].join("\n");
export const FEED_CSV = ["sku,qty,cost", "A1,11,1.10", "B2,22,2.20", "C3,33,3.30"].join("\n");

/** A storage import of feeds/stock.csv; `extra` replaces top-level keys. */
export function stockDefinition(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "Stock feed",
    active: true,
    schedule: "0 3 * * *",
    type: "products",
    action: "import",
    connection: { type: "sdsftp", path: "feeds" },
    file_configs: [
      {
        name: "stock\\.csv",
        min_age: 0,
        field_map: { sku: "sku", stock: "qty", cost: "cost" },
        field_run: { warehouse: "<<warehouse>>" },
        identifier: "sku",
        update: "edit",
      },
    ],
    parameters: [{ name: "warehouse", value: "main", encrypted: false }],
    ...extra,
  };
}

export interface TestDaemon {
  daemon: Daemon;
  settings: Settings;
  dir: string;
  headers: Record<string, string>;
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown>; headers: Headers; text: string }>;
  close(graceMs?: number): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Definition files of the automations folder, by file name. */
  definitions?: Record<string, unknown>;
  published?: Record<string, unknown>;
  daemon?: Partial<DaemonOptions>;
  dir?: string;
}

/** A whole daemon on loopback with its embedded service, in a fresh data folder. */
export async function startTestDaemon(options: HarnessOptions = {}): Promise<TestDaemon> {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), "conveyor-daemon-"));
  const automations = path.join(dir, "automations");
  mkdirSync(path.join(automations, "storage", "feeds"), { recursive: true });
  mkdirSync(path.join(automations, "published"), { recursive: true });
  writeFileSync(path.join(automations, "products.csv"), PRODUCTS_CSV);
  writeFileSync(path.join(automations, "storage", "feeds", "stock.csv"), FEED_CSV);
  for (const [name, def] of Object.entries(options.definitions ?? {})) writeFileSync(path.join(automations, name), JSON.stringify(def));
  for (const [name, def] of Object.entries(options.published ?? {})) writeFileSync(path.join(automations, "published", name), JSON.stringify(def));
  const settings = loadSettings({
    cwd: dir,
    env: { CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_AUTOMATIONS: automations, CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0", CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", ...options.env },
  });
  const daemon = await startDaemon(settings, { logger: silentLogger, apiLimits: { read: 100_000, write: 100_000, options: 100_000 }, ...options.daemon });
  const account = daemon.defaultAccount;
  if (!account) throw new Error("the embedded daemon has no account");
  const headers = { "X-Auth-User": account.apiUser, "X-Auth-Token": account.apiToken };
  let closed = false;
  return {
    daemon,
    settings,
    dir,
    headers,
    async request(method, url, body, extra) {
      const res = await fetch(`${daemon.url}${url}`, {
        method,
        headers: { ...(extra ?? headers), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // Not JSON: a debug file or the metrics text; `text` has it.
      }
      return { status: res.status, body: parsed, headers: res.headers, text };
    },
    async close(graceMs = 5_000) {
      if (closed) return;
      closed = true;
      await daemon.shutdown(graceMs);
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls the run record until it is finished. */
export async function waitForRun(t: TestDaemon, runId: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request("GET", `/v3/automations/runs/${runId}`);
    if (res.status === 200 && res.body.state === "finished") return res.body;
    if (Date.now() > until) throw new Error(`run ${runId} did not finish: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
