import { mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadSettings } from "../../src/config.js";
import { parseAutomation, type Automation } from "../../src/definition/index.js";
import { silentLogger } from "../../src/log.js";
import type { RunProgress } from "../../src/pipeline/environment.js";
import { runAutomation } from "../../src/pipeline/run.js";
import type { RunRecord } from "../../src/state/index.js";
import { openWorker, type Worker } from "../../src/worker.js";

/**
 * A worker on a temp data folder with the embedded service, and product
 * import definitions over the service's local storage: the smallest real
 * setup in which a whole import runs.
 */
export interface Harness {
  dir: string;
  worker: Worker;
  /** Folder of the storage connection's `path` (`feeds`). */
  feeds: string;
  writeFeed(name: string, text: string, ageSeconds?: number): string;
  automation(fileConfig: Record<string, unknown>, extra?: Record<string, unknown>): Automation;
  run(automation: Automation, options?: { mode?: "prod" | "debug"; diff?: boolean; force?: boolean; key?: string; progress?: (p: RunProgress) => void }): Promise<RunRecord>;
  /** Items of the service by guid. */
  items(): Map<string, Record<string, string>>;
  /** Bulk jobs the service received, oldest first. */
  bulkJobs(): Array<{ bulk_name: string; upload: string; rows: number }>;
  close(): Promise<void>;
}

export async function openHarness(env: Record<string, string> = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-import-"));
  const settings = loadSettings({ cwd: dir, env: { CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", CONVEYOR_BULK_ROWS: "500", ...env } });
  const worker = await openWorker(settings, silentLogger);
  const feeds = path.join(settings.storage, worker.env.account, "feeds");
  mkdirSync(feeds, { recursive: true });
  const context = worker.embedded?.context;
  if (!context) throw new Error("the harness needs the embedded service");
  return {
    dir,
    worker,
    feeds,
    writeFeed(name, text, ageSeconds = 3600) {
      const file = path.join(feeds, name);
      writeFileSync(file, text);
      const t = new Date(Date.now() - ageSeconds * 1000);
      utimesSync(file, t, t);
      return file;
    },
    automation(fileConfig, extra = {}) {
      const parsed = parseAutomation({
        name: "Harness import",
        active: true,
        schedule: "0 * * * *",
        type: "products",
        action: "import",
        connection: { type: "sdsftp", path: "feeds" },
        file_configs: [{ name: "feed.*\\.csv", identifier: "guid", ...fileConfig }],
        ...extra,
      });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
      return parsed.automation;
    },
    run(automation, options = {}) {
      return runAutomation(worker.env, {
        key: options.key ?? automation.slug,
        automation,
        mode: options.mode ?? "prod",
        trigger: "manual",
        diff: options.diff ?? false,
        force: options.force ?? false,
        notify: false,
        email: null,
        stabilityPollMs: 10,
        ...(options.progress ? { progress: options.progress } : {}),
      });
    },
    items() {
      const rows = context.db.prepare("SELECT * FROM items").all() as Array<Record<string, unknown>>;
      const out = new Map<string, Record<string, string>>();
      for (const row of rows) {
        const fields = typeof row.fields === "string" ? (JSON.parse(row.fields) as Record<string, string>) : {};
        const guid = String(row.guid ?? fields.guid);
        out.set(guid, { ...fields, guid });
      }
      return out;
    },
    bulkJobs() {
      return context.db.prepare("SELECT bulk_name, upload, rows FROM bulk_jobs ORDER BY job_id").all() as Array<{ bulk_name: string; upload: string; rows: number }>;
    },
    close: () => worker.close(),
  };
}

export function csv(header: string[], rows: string[][]): string {
  const cell = (v: string): string => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return [header, ...rows].map((r) => r.map(cell).join(",")).join("\n") + "\n";
}

/** A debug run's plan, errors and bulk files, header first and their lines sorted (a vanished record's create comes after the rest of the plan). */
export function debugFiles(h: Harness, run: RunRecord): Record<string, string[]> {
  const folder = path.join(h.dir, ".conveyor", "runs", run.id, "debug");
  const out: Record<string, string[]> = {};
  for (const name of readdirSync(folder).sort()) {
    if (!/^(plan|errors|bulk-\d+)\.csv$/.test(name)) continue;
    const [header = "", ...lines] = readFileSync(path.join(folder, name), "utf8").split("\n");
    out[name] = [header, ...lines.sort()];
  }
  return out;
}
