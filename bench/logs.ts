/**
 * Writes ROWS log records (default 1,000,000) through the run's LogWriter into
 * a fresh state store, as an export's commit does (one "export" record per
 * row, one message, identifiers in file order, a snapshot put's worth at a
 * time through addShared), then times a few searches over them: the
 * identifier search reads the pages' identifier ranges. SQLite always; PostgreSQL too when CONVEYOR_BENCH_PG_URL is set
 * (a fresh schema is made and dropped).
 *
 *   npm run bench:logs            (npm run bench:logs -- 200000 for a quicker look)
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { LogWriter } from "../src/pipeline/logs.js";
import { PostgresStore } from "../src/state/postgres.js";
import { SNAPSHOT_PUT_ENTRIES } from "../src/state/snapshot-entry.js";
import { SqliteStore } from "../src/state/sqlite.js";
import type { LogQuery, StateStore } from "../src/state/types.js";

const ROWS = Number(process.argv[2] ?? process.env.ROWS ?? 1_000_000);
if (!Number.isInteger(ROWS) || ROWS <= 0) throw new Error(`bench:logs takes a row count, such as 200000, not ${process.argv[2] ?? process.env.ROWS}`);

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function write(store: StateStore, runId: string): Promise<{ seconds: number; cpu: number }> {
  const logs = new LogWriter(store, { runId, account: "bench", integration: "conveyor", operation: "export", type: "item" });
  const message = { file: "catalogue.csv" };
  const t0 = performance.now();
  const c0 = cpuSeconds();
  for (let from = 0; from < ROWS; from += SNAPSHOT_PUT_ENTRIES) {
    const identifiers = Array.from({ length: Math.min(SNAPSHOT_PUT_ENTRIES, ROWS - from) }, (_, i) => `P${String(from + i).padStart(7, "0")}`);
    await logs.addShared(identifiers, { action: "export", result: "success", message });
  }
  await logs.flush();
  return { seconds: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0 };
}

async function searches(store: StateStore, runId: string): Promise<string> {
  const probe = `P${String(Math.floor(ROWS / 3)).padStart(7, "0")}`;
  const any = (await store.searchLogs({ account: "bench", identifier: [probe] })).logs[0];
  const queries: Array<[string, LogQuery]> = [
    ["newest 20", { account: "bench" }],
    ["identifier", { account: "bench", identifier: [probe] }],
    ["id", { account: "bench", id: any?.id ?? "" }],
    ["run, page 50", { account: "bench", run: runId, start: 950, records: 50 }],
    ["time range", { account: "bench", timestamp_start: "2000-01-01 00:00:00", timestamp_end: "2999-01-01 00:00:00", records: 50 }],
  ];
  const out: string[] = [];
  for (const [label, query] of queries) {
    const t0 = performance.now();
    const page = await store.searchLogs(query);
    out.push(`${label} ${(performance.now() - t0).toFixed(1)} ms (found ${page.found})`);
  }
  return out.join(", ");
}

async function measure(label: string, store: StateStore): Promise<void> {
  try {
    const w = await write(store, "run-1");
    console.log(`${label}: ${ROWS.toLocaleString("en")} log records in ${w.seconds.toFixed(2)} s (CPU ${w.cpu.toFixed(2)} s), ${Math.round(ROWS / w.seconds).toLocaleString("en")} records/s`);
    console.log(`  searches: ${await searches(store, "run-1")}`);
  } finally {
    await store.close();
  }
}

const dir = await mkdtemp(path.join(tmpdir(), "conveyor-bench-logs-"));
try {
  await measure("sqlite", new SqliteStore(path.join(dir, "state.db")));
  const url = process.env.CONVEYOR_BENCH_PG_URL;
  if (url) {
    const schema = `bench_${randomBytes(4).toString("hex")}`;
    try {
      await measure("postgres", await PostgresStore.open(url, { schema }));
    } finally {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
