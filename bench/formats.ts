/**
 * Import reader benchmark: a 1,000,000-row, ~380 MB quoted CSV of 15 columns, read by bare
 * papaparse (header: false) and by openReader with accessors for all 15 fields. Each
 * measurement runs in its own process so its peak RSS is its own.
 *
 *   npm run bench:formats [-- rows]
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eachRow, openReader } from "../src/formats/index.js";
import { bareParse } from "./bare-parse.js";

const COLUMNS = 15;

async function generate(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  const header = Array.from({ length: COLUMNS }, (_, i) => `"column_${i + 1}"`).join(",");
  let buffer = `${header}\n`;
  for (let r = 1; r <= rows; r++) {
    const fields: string[] = [];
    for (let c = 0; c < COLUMNS; c++) {
      const v = c === 0 ? `0${String(r).padStart(12, "0")}` : c === 3 ? `Desc, "quoted" ${r} lorem ipsum` : `value-${c}-${(r * 7919 + c) % 100000}-abcdefgh`;
      fields.push(`"${v.replace(/"/g, '""')}"`);
    }
    buffer += `${fields.join(",")}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, "drain");
      buffer = "";
    }
  }
  out.end(buffer);
  await once(out, "finish");
}

function sampleRss(): { stop: () => number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
    },
  };
}

async function reader(path: string): Promise<number> {
  const r = await openReader(path, {});
  const accessors = Array.from({ length: COLUMNS }, (_, i) => r.accessor(`column_${i + 1}`));
  let rows = 0;
  let chars = 0;
  for await (const row of eachRow(r)) {
    for (const get of accessors) chars += get?.(row)?.length ?? 0;
    rows++;
  }
  await r.close();
  if (chars === 0) throw new Error("no values read");
  return rows;
}

async function child(mode: string, path: string): Promise<void> {
  const rss = sampleRss();
  const start = process.hrtime.bigint();
  const rows = mode === "bare" ? await bareParse(path) : await reader(path);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  process.stdout.write(JSON.stringify({ mode, rows, seconds, rowsPerSecond: rows / seconds, peakRssMb: rss.stop() / 2 ** 20 }));
}

async function measure(mode: string, path: string): Promise<{ rowsPerSecond: number; peakRssMb: number; rows: number; seconds: number }> {
  const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--child", mode, path], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(proc, "exit")) as [number];
  if (code !== 0) throw new Error(`${mode} run failed with exit code ${code}`);
  return JSON.parse(out) as { rowsPerSecond: number; peakRssMb: number; rows: number; seconds: number };
}

async function main(): Promise<void> {
  const [flag, mode, path] = process.argv.slice(2);
  if (flag === "--child" && mode && path) return child(mode, path);
  const rows = Number(flag ?? 1_000_000);
  const dir = await mkdtemp(join(tmpdir(), "bench-formats-"));
  try {
    const file = join(dir, "feed.csv");
    await generate(file, rows);
    const size = (await stat(file)).size;
    console.log(`file: ${rows} rows, ${COLUMNS} quoted columns, ${(size / 1e6).toFixed(0)} MB`);
    const best = { bare: { rowsPerSecond: 0, peakRssMb: 0 }, reader: { rowsPerSecond: 0, peakRssMb: 0 } };
    const peak = { bare: 0, reader: 0 };
    for (let round = 1; round <= 3; round++) {
      for (const m of ["bare", "reader"] as const) {
        const r = await measure(m, file);
        if (r.rows !== rows) throw new Error(`${m} read ${r.rows} rows, expected ${rows}`);
        console.log(`round ${round} ${m.padEnd(6)} ${Math.round(r.rowsPerSecond).toLocaleString("en")} rows/s  ${r.seconds.toFixed(2)} s  peak RSS ${r.peakRssMb.toFixed(0)} MB`);
        if (r.rowsPerSecond > best[m].rowsPerSecond) best[m] = r;
        peak[m] = Math.max(peak[m], r.peakRssMb);
      }
    }
    const ratio = best.reader.rowsPerSecond / best.bare.rowsPerSecond;
    console.log(`bare papaparse (header:false): ${Math.round(best.bare.rowsPerSecond).toLocaleString("en")} rows/s, peak RSS ${peak.bare.toFixed(0)} MB`);
    console.log(`openReader + 15 accessors:     ${Math.round(best.reader.rowsPerSecond).toLocaleString("en")} rows/s, peak RSS ${peak.reader.toFixed(0)} MB`);
    console.log(`ratio ${ratio.toFixed(2)} (target >= 0.50), reader peak RSS target < 300 MB`);
    if (ratio < 0.5 || peak.reader >= 300) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
