import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { loadItemsCsv, startEmbeddedService, type EmbeddedService, type EmbeddedServiceOptions } from "../../src/embedded/index.js";
import { silentLogger } from "../../src/log.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SECRET_KEY = "a".repeat(64);

export interface DaemonProcess {
  name: string;
  url: string;
  proc: ChildProcess;
  /** Its JSON log lines so far (run_started, run_finished, …). */
  events: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * One remote service for the whole cluster (the embedded service started by
 * the test) with its storage folder, shared by every daemon process.
 */
export interface ClusterEnv {
  dir: string;
  service: EmbeddedService;
  storage: string;
  /** Folder of the account's feeds: `<storage>/<account>/feeds`. */
  feeds: string;
  headers: Record<string, string>;
  spawnDaemon(name: string, extraEnv?: Record<string, string>): Promise<DaemonProcess>;
  close(): Promise<void>;
}

export async function openClusterEnv(databaseUrl: string, service: Partial<EmbeddedServiceOptions> = {}, productsCsv?: string): Promise<ClusterEnv> {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-cluster-"));
  if (productsCsv) {
    writeFileSync(path.join(dir, "products.csv"), productsCsv);
    await loadItemsCsv(path.join(dir, "service"), path.join(dir, "products.csv"));
  }
  const embedded = await startEmbeddedService({ dataDir: path.join(dir, "service"), apiUser: "acme", apiToken: "acme-token-123456", logger: silentLogger, ...service });
  const storage = path.join(dir, "storage");
  const feeds = path.join(storage, embedded.apiUser, "feeds");
  mkdirSync(feeds, { recursive: true });
  const daemons: DaemonProcess[] = [];
  return {
    dir,
    service: embedded,
    storage,
    feeds,
    headers: { "X-Auth-User": embedded.apiUser, "X-Auth-Token": embedded.apiToken },
    async spawnDaemon(name, extraEnv = {}) {
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        CONVEYOR_DATABASE_URL: databaseUrl,
        CONVEYOR_SERVICE_URL: embedded.url,
        CONVEYOR_API_USER: embedded.apiUser,
        CONVEYOR_API_TOKEN: embedded.apiToken,
        CONVEYOR_STORAGE: storage,
        CONVEYOR_DATA_DIR: path.join(dir, name),
        CONVEYOR_LISTEN: "127.0.0.1:0",
        CONVEYOR_SECRET_KEY: SECRET_KEY,
        CONVEYOR_ALLOW_PRIVATE_HOSTS: "true",
        CONVEYOR_RUN_LEASE: "20s",
        ...extraEnv,
      };
      delete env.CONVEYOR_AUTOMATIONS;
      if (extraEnv.CONVEYOR_AUTOMATIONS) env.CONVEYOR_AUTOMATIONS = extraEnv.CONVEYOR_AUTOMATIONS;
      const proc = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "daemon", "--grace", "5"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
      const { stdout, stderr } = proc;
      if (!stdout || !stderr) throw new Error("the daemon process has no output pipes");
      const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
      const events: Array<Record<string, unknown>> = [];
      createInterface({ input: stdout }).on("line", (line) => {
        try {
          events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // Not a log line.
        }
      });
      const url = await new Promise<string>((resolve, reject) => {
        let err = "";
        createInterface({ input: stderr }).on("line", (line) => {
          err += `${line}\n`;
          const m = /listening on (http:\/\/\S+)/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
        void exited.then((code) => reject(new Error(`daemon ${name} exited with ${code} before listening:\n${err}`)));
      });
      const daemon: DaemonProcess = {
        name,
        url,
        proc,
        events,
        exited,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) {
            proc.kill("SIGTERM");
            const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
            await exited;
            clearTimeout(timer);
          }
        },
      };
      daemons.push(daemon);
      return daemon;
    },
    async close() {
      await Promise.all(daemons.map((d) => d.stop()));
      await embedded.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Definition files for the automations folder a daemon loads at start. */
export function writeDefinitions(dir: string, definitions: Record<string, unknown>): string {
  const folder = path.join(dir, "automations");
  mkdirSync(folder, { recursive: true });
  for (const [name, def] of Object.entries(definitions)) writeFileSync(path.join(folder, name), JSON.stringify(def));
  return folder;
}

export async function api(url: string, headers: Record<string, string>, route: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${route}`, { headers });
  return (await res.json()) as Record<string, unknown>;
}

export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms: number, everyMs = 250): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
