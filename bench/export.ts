/**
 * Exports a catalogue of ROWS products (default 1,000,000) from the embedded
 * service to CSV on a local storage connection, as `conveyor run` does: bulk
 * export, mapping (with a value_map and a service action), rendering, atomic
 * upload into storage, snapshot commit. Compared in the same run with writing
 * the same rows with the bare CSV writer. The template phase exports the same
 * rows as XML twice: through the built-in XML writer and through a Twig
 * template of the same shape (rendered in its own process, record batches
 * streamed through the template's top-level loop). Each measurement runs in
 * its own process, so its peak RSS is its own (the export's includes the
 * in-process embedded service, as in the daemon; the template's render
 * process is measured apart).
 *
 * The CSV export run is cut in three: the service's export job (its own
 * time, from its log line), the worker's part (from the job's end to the
 * file delivered: polling, download, parse, transform, render, upload), and
 * the commit (snapshot and one log record per exported row). Targets: end to
 * end ÷ bare ≥ 0.3, worker's part ÷ bare ≥ 0.5, the service's job no slower
 * than the worker's part; a miss exits non-zero.
 *
 *   npm run bench:export            (npm run bench:export -- 200000, or ROWS=200000, for a quicker look;
 *                                    -- 1000000 --unordered: identifiers in no order, as UUIDs come)
 *
 * BENCH_CPU_PROF=<folder>: --cpu-prof profiles of each export run's process,
 * in a folder named by the run, one per thread (thread 0 the main one).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadSettings } from "../src/config.js";
import { parseAutomation } from "../src/definition/index.js";
import { openDb, servicePaths } from "../src/embedded/db.js";
import { ItemStore } from "../src/embedded/item-store.js";
import { openWriter } from "../src/formats/index.js";
import { createLogger, type Logger } from "../src/log.js";
import { runAutomation } from "../src/pipeline/run.js";
import { openWorker } from "../src/worker.js";
import { MALLOC_ENV, tuneHeap } from "../src/memory.js";
import { benchIdentifier } from "./identifiers.js";
import { compileBench, removeBenchBuild } from "./compile.js";

// The count comes as an argument (`npm run bench:export -- 200000`) or as ROWS; the children get it through ROWS.
const ROWS = Number(process.argv[2] !== "--child" && process.argv[2] && process.argv[2] !== "--unordered" ? process.argv[2] : (process.env.ROWS ?? 1_000_000));
if (!Number.isInteger(ROWS) || ROWS <= 0) throw new Error(`bench:export takes a row count, such as 200000, not ${process.argv[2] ?? process.env.ROWS}`);
process.env.ROWS = String(ROWS);
// `--unordered` (passed to the children as BENCH_UNORDERED): identifiers in no order, as UUIDs come, where they
// otherwise ascend with the rows and every B-tree keyed by them (the export snapshot, the log keys) fills at its end.
if (process.argv.includes("--unordered")) process.env.BENCH_UNORDERED = "1";
const unordered = process.env.BENCH_UNORDERED === "1";

const FIELD_MAP = { guid: "id", sku: "sku", title: "title", brand: "brand", price: "price", stock: "quantity", condition: "condition", upc: "upc" };

function product(i: number): Record<string, string> {
  return {
    guid: benchIdentifier("P", i, 7, unordered),
    sku: `SKU-${i}`,
    title: `Product ${i}, standard "edition"`,
    brand: i % 3 ? "Acme" : "Bolt & Nut",
    price: `${(i % 500) + 0.99}`,
    stock: String(i % 40),
    condition: i % 5 ? "New" : "Used",
    upc: String(100000000000 + i),
    description: "A product description that the export does not select.",
  };
}

let peak = 0;
function sample(): NodeJS.Timeout {
  return setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
}

async function seed(dataDir: string): Promise<void> {
  const db = openDb(servicePaths(dataDir));
  const items = new ItemStore(db);
  const batch = db.transaction((from: number) => {
    for (let i = from; i < Math.min(ROWS, from + 10_000); i++) items.insert({ id: "", ...product(i) } as Parameters<ItemStore["insert"]>[0]);
  });
  for (let from = 0; from < ROWS; from += 10_000) batch(from);
  db.close();
  process.stdout.write(JSON.stringify({ rows: ROWS }));
}

/** The built-in XML writer's shape (`<records><record><id>…`), written as a template. */
const XML_TEMPLATE = `<?xml version="1.0" encoding="UTF-8"?>
<records>
{% for p in data %}
  <record>${Object.values(FIELD_MAP).map((c) => `<${c}>{{ p.${c}|e('xml') }}</${c}>`).join("")}</record>
{% endfor %}
</records>
`;

type Variant = "csv" | "xml" | "template";

function fileConfig(variant: Variant): Record<string, unknown> {
  const common = { field_map: FIELD_MAP, value_map: { condition: { New: "new_new" } }, service_actions: [{ search: "stock:>30", setValue: { stock: 30 } }] };
  if (variant === "csv") return { name: "catalogue.csv", ...common };
  if (variant === "xml") return { name: "catalogue.xml", ...common };
  return { name: "catalogue.xml", template: XML_TEMPLATE, ...common };
}

interface Phases {
  /** The service's export job, its own time. */
  jobSeconds: number;
  /** From the job's end to the file delivered. */
  workerSeconds: number;
  /** Snapshot and log records after delivery. */
  commitSeconds: number;
  /** The same three in this process's CPU seconds: on a loaded machine, wall time is mostly waiting for a core. */
  cpu: { job: number; worker: number; commit: number; workerMain: number };
}

/** CPU seconds (user and system) this process has used. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** The main thread's alone: what bounds the worker's part on an idle machine when its render thread keeps up. */
function mainCpuSeconds(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1e6;
}

/** A logger that keeps only the embedded service's "export complete" line, with when it came. */
interface JobDone {
  at: number;
  cpu: number;
  main: number;
  ms: number;
}

function jobClock(): { logger: Logger; done: JobDone | null } {
  const clock: { logger: Logger | null; done: JobDone | null } = { logger: null, done: null };
  const logger = createLogger({
    level: "info",
    destination: {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string; ms?: number };
        if (entry.msg === "export complete" && typeof entry.ms === "number") clock.done = { at: performance.now(), cpu: cpuSeconds(), main: mainCpuSeconds(), ms: entry.ms };
      },
    },
  });
  return Object.assign(clock, { logger });
}

async function exportRun(dir: string, variant: Variant): Promise<void> {
  tuneHeap();
  const timer = sample();
  const settings = loadSettings({ cwd: dir, env: { CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", CONVEYOR_LOG_LEVEL: "silent" } });
  const clock = jobClock();
  const worker = await openWorker(settings, clock.logger);
  const parsed = parseAutomation({
    name: "Bench export",
    active: true,
    schedule: "0 3 * * *",
    type: "products",
    action: "export",
    connection: { type: "sdsftp", path: "bench" },
    file_configs: [fileConfig(variant)],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const stages = new Map<string, { at: number; cpu: number; main: number }>();
  const started = performance.now();
  const startCpu = cpuSeconds();
  const progress = (p: { stage: string }): void => {
    if (!stages.has(p.stage)) stages.set(p.stage, { at: performance.now(), cpu: cpuSeconds(), main: mainCpuSeconds() });
  };
  const run = await runAutomation(worker.env, { key: "bench", automation: parsed.automation, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null, progress });
  const ended = performance.now();
  const endCpu = cpuSeconds();
  const seconds = (ended - started) / 1000;
  clearInterval(timer);
  const file = path.join(settings.storage, worker.env.account, "bench", variant === "csv" ? "catalogue.csv" : "catalogue.xml");
  const size = (await stat(file)).size;
  await worker.close();
  if (run.outcome !== "success" || run.counts.create !== ROWS) throw new Error(`export ended ${run.outcome}: ${JSON.stringify(run.error ?? run.counts)}`);
  const job = clock.done;
  const committing = stages.get("commit") ?? { at: ended, cpu: endCpu, main: mainCpuSeconds() };
  const phases: Phases | undefined = job
    ? {
        jobSeconds: job.ms / 1000,
        workerSeconds: (committing.at - job.at) / 1000,
        commitSeconds: (ended - committing.at) / 1000,
        // The job runs while the worker only polls, so the process's CPU up to the job's end is the job's.
        cpu: { job: job.cpu - startCpu, worker: committing.cpu - job.cpu, commit: endCpu - committing.cpu, workerMain: committing.main - job.main },
      }
    : undefined;
  process.stdout.write(JSON.stringify({ rows: run.counts.create, seconds, peakMb: peak / 2 ** 20, bytes: size, phases }));
}

async function bare(dir: string): Promise<void> {
  // The worker's heap settings, as the export run has them: V8's own sizing made the bare parse of bench:import
  // run at two speeds, and a slow reference flatters the ratio.
  tuneHeap();
  const timer = sample();
  const columns = Object.values(FIELD_MAP);
  const fields = Object.keys(FIELD_MAP);
  const started = performance.now();
  const startCpu = cpuSeconds();
  const writer = await openWriter(path.join(dir, "bare.csv"), { format: "csv", columns });
  for (let i = 0; i < ROWS; i++) {
    const p = product(i);
    const record: Record<string, string> = {};
    fields.forEach((f, c) => (record[columns[c] as string] = p[f] ?? ""));
    await writer.write(record);
  }
  const { rows, bytes } = await writer.close();
  clearInterval(timer);
  process.stdout.write(JSON.stringify({ rows, seconds: (performance.now() - started) / 1000, cpuSeconds: cpuSeconds() - startCpu, peakMb: peak / 2 ** 20, bytes }));
}

interface Measure {
  rows: number;
  seconds: number;
  peakMb: number;
  bytes: number;
  phases?: Phases;
  /** The bare writer's CPU seconds. */
  cpuSeconds?: number;
}

let script = "";

/** BENCH_CPU_PROF: the profile arguments of an export run (the seed and the bare writer are not profiled). */
function profileArgs(mode: string): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir && mode.startsWith("export") ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir, `${mode}-${Date.now()}`)}`] : [];
}

async function child(mode: string, dir: string): Promise<Measure> {
  // Every child starts as the `conveyor` command does (its shebang line), the bare writer too: the reference gets
  // the worker's memory settings (see bare()).
  const env = { ...MALLOC_ENV, ...process.env };
  const proc = spawn(process.execPath, [...profileArgs(mode), script, "--child", mode, dir], { stdio: ["ignore", "pipe", "inherit"], env });
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(proc, "exit")) as [number];
  if (code !== 0) throw new Error(`${mode} failed with exit code ${code}`);
  return JSON.parse(out) as Measure;
}

async function main(): Promise<void> {
  const [flag, mode, childDir] = process.argv.slice(2);
  if (flag === "--child" && childDir) {
    if (mode === "seed") return seed(path.join(childDir, "data"));
    if (mode === "export") return exportRun(childDir, "csv");
    if (mode === "export-xml") return exportRun(childDir, "xml");
    if (mode === "export-template") return exportRun(childDir, "template");
    return bare(childDir);
  }
  script = await compileBench("export");
  const dir = await mkdtemp(path.join(tmpdir(), "conveyor-bench-export-"));
  try {
    const t0 = performance.now();
    await child("seed", dir);
    console.log(`catalogue: ${ROWS.toLocaleString("en")} products in the embedded service (seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const exp = await child("export", dir);
    const raw = await child("bare", dir);
    const line = (label: string, m: Measure): string =>
      `${label} ${Math.round(m.rows / m.seconds).toLocaleString("en").padStart(9)} rows/s  ${m.seconds.toFixed(1).padStart(6)} s  ${(m.bytes / 1e6).toFixed(0)} MB  peak RSS ${m.peakMb.toFixed(0)} MB`;
    console.log(line("export run (service → CSV in storage):", exp));
    console.log(line("bare CSV writer (same rows):           ", raw));
    const rate = (seconds: number): string => `${Math.round(ROWS / seconds).toLocaleString("en").padStart(9)} rows/s  ${seconds.toFixed(1).padStart(6)} s`;
    const bareRate = raw.rows / raw.seconds;
    const checks: Array<[string, boolean]> = [];
    const endToEnd = exp.rows / exp.seconds / bareRate;
    checks.push([`export / bare, end to end: ${endToEnd.toFixed(2)} (target ≥ 0.3)`, endToEnd >= 0.3]);
    if (exp.phases) {
      const { jobSeconds, workerSeconds, commitSeconds } = exp.phases;
      const { cpu } = exp.phases;
      console.log(`  the service's export job:            ${rate(jobSeconds)}  (CPU ${cpu.job.toFixed(1)} s)`);
      console.log(`  the worker's part (read → delivered): ${rate(workerSeconds)}  (CPU ${cpu.worker.toFixed(1)} s, main thread ${cpu.workerMain.toFixed(1)} s)`);
      console.log(`  commit (snapshot, log records):      ${rate(commitSeconds)}  (CPU ${cpu.commit.toFixed(1)} s)`);
      if (raw.cpuSeconds) {
        const bareCpu = raw.cpuSeconds;
        console.log(`  by CPU time (for a loaded machine): end to end ${(bareCpu / (cpu.job + cpu.worker + cpu.commit)).toFixed(2)}, worker's part ${(bareCpu / cpu.worker).toFixed(2)}, bare CPU ${bareCpu.toFixed(1)} s`);
      }
      const own = ROWS / workerSeconds / bareRate;
      checks.push([`worker's part / bare: ${own.toFixed(2)} (target ≥ 0.5)`, own >= 0.5]);
      checks.push([`service job / worker's part: ${(workerSeconds / jobSeconds).toFixed(2)} (target ≥ 1: the job no slower than the worker)`, jobSeconds <= workerSeconds]);
    } else checks.push(["the service's export job logged no time", false]);
    checks.push([`export peak RSS ${exp.peakMb.toFixed(0)} MB (target < 300)`, exp.peakMb < 300]);
    for (const [text, pass] of checks) console.log(`${pass ? "ok  " : "FAIL"} ${text}`);
    const ok = checks.every(([, pass]) => pass);
    const xml = await child("export-xml", dir);
    const template = await child("export-template", dir);
    console.log(line("export run, built-in XML writer:       ", xml));
    console.log(line("export run, XML through a template:    ", template));
    console.log(`template / built-in XML: ${((template.rows / template.seconds) / (xml.rows / xml.seconds)).toFixed(2)} (the render process's own RSS is not in the peak)`);
    await writeFile(path.join(path.dirname(script), "..", "..", "export.json"), `${JSON.stringify({ rows: ROWS, export: exp, bare: raw, xml, template, ok }, null, 2)}\n`);
    if (!ok) process.exitCode = 1;
  } finally {
    await removeBenchBuild();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
