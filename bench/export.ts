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
 *   npm run bench:export            (ROWS=200000 npm run bench:export for a quicker look)
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
import { silentLogger } from "../src/log.js";
import { runAutomation } from "../src/pipeline/run.js";
import { openWorker } from "../src/worker.js";
import { tuneHeap } from "../src/memory.js";
import { compileBench, removeBenchBuild } from "./compile.js";

const ROWS = Number(process.env.ROWS ?? 1_000_000);
const FIELD_MAP = { guid: "id", sku: "sku", title: "title", brand: "brand", price: "price", stock: "quantity", condition: "condition", upc: "upc" };

function product(i: number): Record<string, string> {
  return {
    guid: `P${String(i).padStart(7, "0")}`,
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

async function exportRun(dir: string, variant: Variant): Promise<void> {
  tuneHeap();
  const timer = sample();
  const settings = loadSettings({ cwd: dir, env: { CONVEYOR_DATA_DIR: path.join(dir, "data"), CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", CONVEYOR_LOG_LEVEL: "silent" } });
  const worker = await openWorker(settings, silentLogger);
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
  const started = performance.now();
  const run = await runAutomation(worker.env, { key: "bench", automation: parsed.automation, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  const file = path.join(settings.storage, worker.env.account, "bench", variant === "csv" ? "catalogue.csv" : "catalogue.xml");
  const size = (await stat(file)).size;
  await worker.close();
  if (run.outcome !== "success" || run.counts.create !== ROWS) throw new Error(`export ended ${run.outcome}: ${JSON.stringify(run.error ?? run.counts)}`);
  process.stdout.write(JSON.stringify({ rows: run.counts.create, seconds, peakMb: peak / 2 ** 20, bytes: size }));
}

async function bare(dir: string): Promise<void> {
  const timer = sample();
  const columns = Object.values(FIELD_MAP);
  const fields = Object.keys(FIELD_MAP);
  const started = performance.now();
  const writer = await openWriter(path.join(dir, "bare.csv"), { format: "csv", columns });
  for (let i = 0; i < ROWS; i++) {
    const p = product(i);
    const record: Record<string, string> = {};
    fields.forEach((f, c) => (record[columns[c] as string] = p[f] ?? ""));
    await writer.write(record);
  }
  const { rows, bytes } = await writer.close();
  clearInterval(timer);
  process.stdout.write(JSON.stringify({ rows, seconds: (performance.now() - started) / 1000, peakMb: peak / 2 ** 20, bytes }));
}

interface Measure {
  rows: number;
  seconds: number;
  peakMb: number;
  bytes: number;
}

let script = "";

async function child(mode: string, dir: string): Promise<Measure> {
  const proc = spawn(process.execPath, [script, "--child", mode, dir], { stdio: ["ignore", "pipe", "inherit"], env: process.env });
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
    const ok = exp.peakMb < 300;
    console.log(`export / bare: ${((exp.rows / exp.seconds) / (raw.rows / raw.seconds)).toFixed(2)}`);
    console.log(`${ok ? "ok  " : "FAIL"} export peak RSS ${exp.peakMb.toFixed(0)} MB (target < 300)`);
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
