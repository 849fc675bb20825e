import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/config.js";
import { parseAutomation } from "../../src/definition/index.js";
import { startEmbeddedService, type EmbeddedService } from "../../src/embedded/index.js";
import { silentLogger } from "../../src/log.js";
import { runAutomation } from "../../src/pipeline/run.js";
import { openWorker, type Worker } from "../../src/worker.js";
import { freshSchema } from "./pg-env.js";
import { startRecordingProxy, type Seen } from "./recording-proxy.js";

const WORKERS = 5;
const RUNS = 10;
const ROWS = 30;
const WRITE_LIMIT = 60;
const READ_LIMIT = 300;

/** Most requests inside any stretch of `ms` (times sorted ascending). */
function busiest(times: number[], ms: number): number {
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] ?? 0) - (times[start] ?? 0) >= ms) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

function perMinute(times: number[]): number {
  const counts = new Map<number, number>();
  for (const t of times) counts.set(Math.floor(t / 60_000), (counts.get(Math.floor(t / 60_000)) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

describe("one account's budget shared through PostgreSQL", () => {
  const db = freshSchema("budget");
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-budget-"));
  const workers: Worker[] = [];
  let service: EmbeddedService | undefined;
  let proxy: Awaited<ReturnType<typeof startRecordingProxy>> | undefined;
  afterAll(async () => {
    for (const w of workers) await w.close();
    await proxy?.close();
    await service?.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ten concurrent runs on five workers with the seed's limits: no 429, never more than the budget in a minute", async () => {
    service = await startEmbeddedService({ dataDir: path.join(dir, "service"), apiUser: "acme", apiToken: "acme-token-123456", logger: silentLogger, writeLimit: WRITE_LIMIT, readLimit: READ_LIMIT });
    proxy = await startRecordingProxy(service.url);
    const storage = path.join(dir, "storage");
    const feeds = path.join(storage, "acme", "feeds");
    mkdirSync(feeds, { recursive: true });
    const old = new Date(Date.now() - 3_600_000);
    for (let r = 0; r < RUNS; r++) {
      const file = path.join(feeds, `feed-${r}.csv`);
      writeFileSync(file, ["guid,sku,title,stock", ...Array.from({ length: ROWS }, (_, i) => `g-${r}-${i},S${r}-${i},Product ${r}-${i},${i}`)].join("\n"));
      utimesSync(file, old, old);
    }
    for (let w = 0; w < WORKERS; w++) {
      const settings = loadSettings({
        cwd: dir,
        env: {
          CONVEYOR_DATA_DIR: path.join(dir, `worker-${w}`),
          CONVEYOR_SERVICE_URL: proxy.url,
          CONVEYOR_API_USER: "acme",
          CONVEYOR_API_TOKEN: "acme-token-123456",
          CONVEYOR_STORAGE: storage,
          CONVEYOR_DATABASE_URL: `${db.url}&pool_size=2`,
          CONVEYOR_WRITE_LIMIT: String(WRITE_LIMIT),
          CONVEYOR_READ_LIMIT: String(READ_LIMIT),
          CONVEYOR_BULK_ROWS: "5",
          CONVEYOR_SECRET_KEY: "b".repeat(64),
          CONVEYOR_ALLOW_PRIVATE_HOSTS: "true",
        },
      });
      workers.push(await openWorker(settings, silentLogger));
    }
    const started = Date.now();
    const records = await Promise.all(
      Array.from({ length: RUNS }, (_, r) => {
        const parsed = parseAutomation({
          name: `Budget ${r}`,
          active: true,
          schedule: "0 3 * * *",
          type: "products",
          action: "import",
          connection: { type: "sdsftp", path: "feeds" },
          file_configs: [{ name: `feed-${r}\\.csv`, identifier: "guid", create: "add", update: "edit", field_map: { guid: "guid", sku: "sku", title: "title", stock: "stock" } }],
        });
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
        const worker = workers[r % WORKERS];
        if (!worker) throw new Error("no worker");
        return runAutomation(worker.env, { key: parsed.automation.slug, automation: parsed.automation, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null, stabilityPollMs: 10 });
      }),
    );
    const elapsed = Date.now() - started;
    for (const record of records) expect(record.outcome, JSON.stringify(record.error)).toBe("success");
    const seen: Seen[] = proxy.seen;
    expect(seen.filter((s) => s.status === 429)).toEqual([]);
    const writes = seen.filter((s) => ["POST", "PUT", "PATCH", "DELETE"].includes(s.method)).map((s) => s.at).sort((a, b) => a - b);
    const reads = seen.filter((s) => s.method === "GET" || s.method === "HEAD").map((s) => s.at).sort((a, b) => a - b);
    // The runs needed more than one minute's writes, so the budget was what held them back.
    expect(writes.length).toBeGreaterThan(WRITE_LIMIT);
    expect(perMinute(writes)).toBeLessThanOrEqual(WRITE_LIMIT);
    expect(busiest(writes, 60_000)).toBeLessThanOrEqual(WRITE_LIMIT);
    expect(perMinute(reads)).toBeLessThanOrEqual(READ_LIMIT);
    expect(busiest(reads, 60_000)).toBeLessThanOrEqual(READ_LIMIT);
    expect(service.context.db.prepare("SELECT count(*) AS n FROM items").get()).toEqual({ n: RUNS * ROWS });
    console.info(`${RUNS} runs: ${writes.length} writes, ${reads.length} reads in ${elapsed} ms; busiest 60 s: ${busiest(writes, 60_000)} writes, ${busiest(reads, 60_000)} reads`);
  }, 300_000);
});
