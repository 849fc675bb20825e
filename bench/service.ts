/**
 * Applies 100,000 product rows through bulk files, as a run's apply step does:
 * an `add` pass, then an `edit` pass, in files of `bulk_rows` (5,000) rows,
 * against the embedded service at the seed's limits (300 reads, 60 writes a
 * minute). Prints rows per second, requests used and peak memory.
 *
 *   npm run bench:service            (ROWS=20000 BULK_ROWS=2000 to change the size)
 */
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedService } from "../src/embedded/index.js";
import { ServiceClient } from "../src/service/client.js";
import { newCounter } from "../src/service/http.js";
import { TokenBucketLimiter, SEED_LIMITS } from "../src/service/limiter.js";

const ROWS = Number(process.env.ROWS ?? 100_000);
const BULK_ROWS = Number(process.env.BULK_ROWS ?? 5_000);

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function writeBulkFile(file: string, action: "add" | "edit", from: number, count: number): Promise<void> {
  const out = createWriteStream(file);
  out.write("action,guid,title,price,stock,brand\n");
  for (let i = from; i < from + count; i++) {
    const guid = `P${String(i).padStart(7, "0")}`;
    const line = action === "add" ? `add,${guid},"Product ${i}, standard",${(i % 500) + 0.99},${i % 40},Acme\n` : `edit,${guid},"Product ${i}, revised",${(i % 500) + 1.49},${(i + 7) % 40},Acme\n`;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

async function pass(client: ServiceClient, dir: string, action: "add" | "edit"): Promise<{ ok: number; failed: number; ms: number }> {
  const started = Date.now();
  const submitted = [];
  for (let from = 0, n = 1; from < ROWS; from += BULK_ROWS, n++) {
    const file = path.join(dir, `${action}-${n}.csv`);
    await writeBulkFile(file, action, from, Math.min(BULK_ROWS, ROWS - from));
    submitted.push(await client.submitBulk(file, { name: `bench-${action}-${n}`, skipAll: true }));
  }
  let ok = 0;
  let failed = 0;
  for (const { bulk_file } of submitted) {
    const status = await client.waitBulk(bulk_file, { pollMs: 250, maxPollMs: 2_000 });
    for await (const row of client.bulkResultRows(status.url ?? "")) {
      if (row.result === "success") ok += 1;
      else failed += 1;
    }
  }
  return { ok, failed, ms: Date.now() - started };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-bench-service-"));
  const service = await startEmbeddedService({ dataDir: path.join(dir, "data"), readLimit: SEED_LIMITS.read, writeLimit: SEED_LIMITS.write });
  try {
    const counter = newCounter();
    const client = new ServiceClient({
      baseUrl: service.url,
      apiUser: service.apiUser,
      apiToken: service.apiToken,
      limiter: new TokenBucketLimiter({ limits: SEED_LIMITS }),
    }).withCounter(counter);
    const results = [];
    for (const action of ["add", "edit"] as const) {
      const r = await pass(client, dir, action);
      results.push(r);
      console.log(`${action.padEnd(4)} ${ROWS} rows in ${(r.ms / 1000).toFixed(1)} s: ${Math.round((ROWS * 1000) / r.ms)} rows/s, ${r.ok} applied, ${r.failed} failed`);
    }
    const ms = results.reduce((sum, r) => sum + r.ms, 0);
    const applied = results.reduce((sum, r) => sum + r.ok, 0);
    console.log(
      `total ${applied} rows applied in ${(ms / 1000).toFixed(1)} s: ${Math.round((applied * 1000) / ms)} rows/s; ` +
        `requests: ${counter.write} write, ${counter.read} read (limits ${SEED_LIMITS.write}/${SEED_LIMITS.read} a minute); ` +
        `bulk_rows ${BULK_ROWS}; peak RSS ${Math.round(Math.max(peakRss, process.memoryUsage().rss) / 2 ** 20)} MB (service and client in one process)`,
    );
    if (applied !== 2 * ROWS) process.exitCode = 1;
  } finally {
    clearInterval(sampler);
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
