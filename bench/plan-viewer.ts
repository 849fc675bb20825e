/**
 * Plan viewer benchmark (issue 27): the plan.csv of a one-million-row debug run, paged through the
 * daemon's HTTP route `GET /v3/automations/runs/{id}/plan` as the console's plan viewer pages it.
 *
 * The plan is generated, not imported: the run record and plan.csv are written in the real format
 * by the pipeline's own plan writer (PlanLines, the code a debug run writes plan.csv with), for
 * 1,000,000 records of a nightly full run against a filled catalogue: 10% creates (12 fields each),
 * 80% updates (1 to 3 fields), 5% removals, 5% skipped; about 3 million lines. `--creates` makes
 * every record a create of 11 fields (the plan of bench/import.ts's first debug run: 11 million
 * lines, about 1 GB). Values carry quotes, commas and line breaks as supplier feeds do.
 *
 * The daemon runs as `npm start` runs it (compiled, `node dist/src/cli.js daemon`) in its own
 * process, whose RSS is read from /proc. Measured: the first open (which builds the index), the
 * first page again, a middle page, the last page, a filtered page (field) and the next ones, a
 * filter by identifier prefix and its next page. Target: each page under 1 s, the daemon's RSS
 * under 300 MB. Then Chromium pages through the console's plan viewer (plan-viewer-browser.ts):
 * each page under 1 s from click to load, the PSS of the renderer showing it under 200 MB (all
 * renderers' total printed beside it). Exit code 1 on a miss.
 *
 *   npm run bench:plan-viewer [-- records [--creates]]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { PLAN_HEADER, PlanLines, type OpRow } from "../src/pipeline/output/op-rows.js";
import { csvCell } from "../src/pipeline/output/csv-cell.js";
import { emptyCounts } from "../src/state/index.js";
import { localDebugFolder } from "../src/state/debug-files.js";
import { SqliteStore } from "../src/state/sqlite.js";
import { browsePlan } from "./plan-viewer-browser.js";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const USER = "bench";
const TOKEN = "bench-token-0123456789";
const RUN = "r20261121T030000-bench1";
const FIELDS = ["sku", "title", "description", "brand", "price", "stock", "weight", "ean", "category", "color", "size", "material"];
const TARGET_MS = 1000;
const TARGET_RSS_MB = 300;
const TARGET_BROWSER_MB = 200;

function value(field: string, r: number, shift: number): string {
  switch (field) {
    case "title":
      return `Product ${r} "${["Alpha", "Beta", "Gamma"][r % 3]}" edition`;
    case "description":
      return `Desc, "quoted" ${r}${r % 50 === 0 ? "\nsecond line" : ""} lorem ipsum dolor sit amet, consectetur adipiscing elit`;
    case "price":
      return ((r % 9000) / 100 + 1 + shift).toFixed(2);
    case "stock":
      return String(((r * 31) % 500) + shift);
    default:
      return `${field}-${(r * 7919 + shift) % 100000}`;
  }
}

function op(r: number, allCreates: boolean): OpRow {
  const identifier = `SKU-${r}`;
  const kind = allCreates ? 0 : r % 20;
  if (kind < 2) {
    const columns = allCreates ? FIELDS.slice(1) : FIELDS;
    return { kind: "create", action: "add", identifier, reason: undefined, columns, after: columns.map((f) => value(f, r, 0)), before: null, same: null };
  }
  if (kind === 18) return { kind: "remove", action: "end", identifier, reason: undefined, columns: [], after: [], before: null, same: null };
  if (kind === 19) return { kind: "skipped", action: null, identifier, reason: "not in the service and create is not set", columns: [], after: [], before: null, same: null };
  const columns = ["price", "stock", "title"].slice(0, 1 + (r % 3));
  return { kind: "update", action: "edit", identifier, reason: undefined, columns, after: columns.map((f) => value(f, r, 1)), before: columns.map((f) => value(f, r, 0)), same: null };
}

async function writePlan(file: string, records: number, allCreates: boolean): Promise<void> {
  const out = createWriteStream(file);
  const lines = new PlanLines();
  let buffer = PLAN_HEADER;
  for (let r = 1; r <= records; r++) {
    const row = op(r, allCreates);
    buffer += lines.text(row, row.after.map(csvCell), false);
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  }
  out.end(buffer);
  await once(out, "finish");
}

async function build(): Promise<void> {
  const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const proc = spawn(process.execPath, [tsc, "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  const [code] = (await once(proc, "exit")) as [number];
  if (code !== 0) throw new Error("npm run build failed");
}

async function startDaemon(dataDir: string): Promise<{ proc: ChildProcess; url: string }> {
  const env: Record<string, string | undefined> = { ...process.env, CONVEYOR_DATA_DIR: dataDir, CONVEYOR_AUTOMATIONS: "", CONVEYOR_LISTEN: "127.0.0.1:0", CONVEYOR_SERVICE_LISTEN: "127.0.0.1:0", CONVEYOR_API_USER: USER, CONVEYOR_API_TOKEN: TOKEN };
  delete env.CONVEYOR_DATABASE_URL;
  const proc = spawn(process.execPath, [path.join(ROOT, "dist", "src", "cli.js"), "daemon", "--grace", "1"], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let err = "";
    createInterface({ input: proc.stderr as NodeJS.ReadableStream }).on("line", (line) => {
      err += `${line}\n`;
      const m = /^Conveyor daemon listening on (\S+)/.exec(line);
      if (m?.[1]) resolve(m[1]);
    });
    proc.on("exit", () => reject(new Error(`the daemon exited before it listened:\n${err}`)));
  });
  return { proc, url };
}

async function rssMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

interface Measured {
  name: string;
  ms: number;
  rows: number;
  total: number | null;
  page: number;
  pages: number | null;
}

async function main(): Promise<void> {
  const records = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const allCreates = process.argv.includes("--creates");
  const dir = await mkdtemp(path.join(tmpdir(), "conveyor-bench-plan-"));
  const dataDir = path.join(dir, "data");
  let daemon: { proc: ChildProcess; url: string } | null = null;
  try {
    const folder = localDebugFolder(dataDir, RUN);
    await mkdir(folder, { recursive: true });
    const started = Date.now();
    await writePlan(path.join(folder, "plan.csv"), records, allCreates);
    const size = (await stat(path.join(folder, "plan.csv"))).size;
    console.log(`plan.csv: ${records.toLocaleString("en")} records${allCreates ? " (all creates)" : ""}, ${(size / 1e6).toFixed(0)} MB, written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const store = new SqliteStore(path.join(dataDir, "state.db"), { dataDir });
    const at = new Date().toISOString();
    await store.createRun({
      id: RUN, automation: "1", account: USER, mode: "debug", trigger: "manual", diff: false, force: false, notify: false, email: null,
      started: at, finished: at, outcome: "success", counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0, files: [],
      debug_files: ["plan.csv"], guard: null, error: null, heartbeat: null,
    });
    await store.close();
    await build();
    daemon = await startDaemon(dataDir);
    const { url, proc } = daemon;
    const pid = proc.pid ?? 0;
    const measured: Measured[] = [];
    const get = async (name: string, query: string): Promise<Measured> => {
      const t0 = performance.now();
      const res = await fetch(`${url}/v3/automations/runs/${RUN}/plan${query}`, { headers: { "X-Auth-User": USER, "X-Auth-Token": TOKEN } });
      const body = (await res.json()) as { total: number | null; page: number; pages: number | null; rows: unknown[]; message?: string };
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${body.message ?? ""}`);
      const m = { name, ms, rows: body.rows.length, total: body.total, page: body.page, pages: body.pages };
      measured.push(m);
      const mem = await rssMb(pid);
      console.log(`${name.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms  page ${m.page} of ${m.pages ?? "?"} (${m.rows} rows of ${m.total ?? "?"})  daemon RSS ${mem.rss.toFixed(0)} MB`);
      return m;
    };
    const open = await get("open (builds the index)", "");
    await get("first page", "");
    const pages = open.pages ?? 1;
    await get("middle page", `?page=${Math.ceil(pages / 2)}`);
    await get("last page", `?page=${pages}`);
    await get("page 2", "?page=2");
    await get("filtered: field=stock", "?field=stock");
    for (let p = 2; p <= 4; p++) await get(`filtered: field=stock, next`, `?field=stock&page=${p}`);
    const stockPages = measured.at(-1)?.pages ?? 1;
    await get("filtered: field=stock, far", `?field=stock&page=${Math.ceil(stockPages / 2)}`);
    await get("filtered: action=end", "?action=end");
    await get("filtered: identifier=SKU-99*", "?identifier=SKU-99*");
    await get("filtered: identifier, next", "?identifier=SKU-99*&page=2");
    const browsed = await browsePlan(url, USER, TOKEN, RUN, pages, (b) =>
      console.log(`${b.name.padEnd(28)} ${b.ms.toFixed(0).padStart(6)} ms  page's renderer PSS ${b.pagePssMb.toFixed(0)} MB (all ${b.renderers} renderers ${b.rendererPssMb.toFixed(0)} MB), JS heap ${b.heapMb.toFixed(1)} MB`),
    );
    const mem = await rssMb(pid);
    const paged = measured.slice(1);
    const worst = Math.max(...paged.map((m) => m.ms));
    const checks = {
      index: { value: open.ms, target: "reported (the first open scans the whole file once)", ok: true },
      page: { value: worst, target: `< ${TARGET_MS} ms (every page after the first open)`, ok: worst < TARGET_MS },
      browserPage: { value: Math.max(...browsed.map((b) => b.ms)), target: `< ${TARGET_MS} ms (each page in Chromium, click to load)`, ok: browsed.every((b) => b.ms < TARGET_MS) },
      browserMemory: { value: Math.max(...browsed.map((b) => b.pagePssMb)), target: `< ${TARGET_BROWSER_MB} MB (PSS of the renderer showing the plan)`, ok: browsed.every((b) => b.pagePssMb < TARGET_BROWSER_MB) },
      rss: { value: mem.peak, target: `< ${TARGET_RSS_MB} MB (daemon's peak RSS)`, ok: mem.peak < TARGET_RSS_MB },
    };
    for (const [name, c] of Object.entries(checks)) console.log(`${c.ok ? "ok  " : "FAIL"} ${name}: ${c.value.toFixed(0)} (target ${c.target})`);
    if (Object.values(checks).some((c) => !c.ok)) process.exitCode = 1;
  } finally {
    if (daemon) {
      daemon.proc.kill("SIGTERM");
      await once(daemon.proc, "exit");
    }
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
