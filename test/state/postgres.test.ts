import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { emptyCounts, openStore, type RunRecord } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { PG_MIGRATIONS } from "../../src/state/pg-migrations.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";
import { bulkSuite } from "./bulk-suite.js";
import { logPagesSuite, oldRowsBeforePages, record } from "./log-pages-suite.js";
import { storeSuite } from "./store-suite.js";

const pgs = new PgSchemas();
const freshSchema = (): string => pgs.fresh();

afterEach(async () => {
  await pgs.dropAll();
});
afterAll(async () => {
  await pgs.end();
});

storeSuite("postgres", async () => PostgresStore.open(PG_URL, { schema: freshSchema() }));
bulkSuite("postgres", async () => PostgresStore.open(PG_URL, { schema: freshSchema() }));
logPagesSuite("postgres", async () => PostgresStore.open(PG_URL, { schema: freshSchema() }));

it("reads the rows of table logs after the pages, as one newest-first list, and forgets them by retention", async () => {
  const schema = freshSchema();
  const store = await PostgresStore.open(PG_URL, { schema });
  // As the version before pages wrote them: one row a record, its whole body.
  const old = Array.from({ length: 1200 }, (_, i) => record(`${i}-old`, i, { job_id: "run-old", timestamp: i < 600 ? "2026-01-01 00:00:00" : "2026-11-20 00:00:00" }));
  const col = (pick: (r: (typeof old)[number]) => unknown): unknown[] => old.map(pick);
  await pgs.query(
    `INSERT INTO "${schema}".logs (account, id, identifier, context, integration, instance, request_id, ts, channel_id, action, operation, method, type, result, job_id, body)
     SELECT 'demo', * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::json[])`,
    [col((r) => r.id), col((r) => r.identifier), col((r) => r.context), col((r) => r.integration), col((r) => r.instance), col((r) => r.request_id), col((r) => r.timestamp),
      col((r) => r.channel_id), col((r) => r.action), col((r) => r.operation), col((r) => r.method), col((r) => r.type), col((r) => r.result), col((r) => r.job_id), col((r) => JSON.stringify(r))],
  );
  await oldRowsBeforePages(store, old);
});

function run(id: string, heartbeat: string): RunRecord {
  return {
    id, automation: "a1", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started: heartbeat, finished: null, outcome: null, counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0,
    files: [], debug_files: [], guard: null, error: null, heartbeat,
  };
}

describe("postgres store: several daemons on one database", () => {
  it("migrates once when several daemons start at the same moment", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 5 }, () => PostgresStore.open(PG_URL, { schema, poolSize: 2 })));
    const { rows } = await pgs.query<{ version: number }>(`SELECT version FROM "${schema}".conveyor_migrations ORDER BY version`);
    expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    await stores[0]?.ledgerAdd("k", [{ path: "a", size: 1, modified: null }]);
    expect(await stores[4]?.ledgerHas("k", { path: "a", size: 1, modified: null })).toBe(true);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("hands each interrupted run to exactly one sweeping daemon", async () => {
    const schema = freshSchema();
    const a = await PostgresStore.open(PG_URL, { schema });
    const b = await PostgresStore.open(PG_URL, { schema });
    const old = "2026-01-01T00:00:00.000Z";
    for (let i = 0; i < 40; i++) await a.createRun(run(`dead-${String(i).padStart(2, "0")}`, old));
    await a.createRun(run("alive", new Date(Date.now() + 60_000).toISOString()));
    const [fromA, fromB] = await Promise.all([a.markInterrupted(new Date()), b.markInterrupted(new Date())]);
    const ids = [...fromA, ...fromB].map((r) => r.id).sort();
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    expect((await b.getRun("dead-07"))?.error?.code).toBe("interrupted");
    expect((await b.getRun("alive"))?.outcome).toBeNull();
    await a.close();
    await b.close();
  });

  it("streams a debug file of several MiB in and out, and pruning the run removes it", async () => {
    const store = await PostgresStore.open(PG_URL, { schema: freshSchema() });
    const r = { ...run("run-big", new Date().toISOString()), outcome: "success" as const, started: "2026-01-01T00:00:00.000Z" };
    await store.createRun(r);
    const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-pg-")), "big.csv");
    const content = randomBytes(3 * 1024 * 1024 + 123);
    writeFileSync(file, content);
    await store.putDebugFile(r.id, "source/big.csv", file);
    const got = await store.getDebugFile(r.id, "source/big.csv");
    expect(got?.size).toBe(content.length);
    expect(got ? Buffer.compare(await buffer(got.open()), content) : null).toBe(0);
    // Put again (a retried upload) replaces, never duplicates.
    await store.putDebugFile(r.id, "source/big.csv", file);
    expect(await store.listDebugFiles(r.id)).toEqual(["source/big.csv"]);
    expect(await store.pruneRuns(new Date())).toBe(1);
    expect(await store.getDebugFile(r.id, "source/big.csv")).toBeNull();
    await store.close();
  });

  it("keeps a debug file over debug_file_limit out of the database, and serves it from the run folder of the host that ran it", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-pg-data-"));
    const schema = freshSchema();
    const here = await PostgresStore.open(PG_URL, { schema, dataDir, debugFileLimitBytes: 1024 * 1024 });
    const elsewhere = await PostgresStore.open(PG_URL, { schema, dataDir: mkdtempSync(path.join(tmpdir(), "conveyor-pg-other-")) });
    const r = run("run-limit", new Date().toISOString());
    await here.createRun(r);
    const folder = path.join(dataDir, "runs", r.id, "debug");
    mkdirSync(path.join(folder, "source"), { recursive: true });
    const feed = path.join(folder, "source", "feed.csv");
    const big = randomBytes(1024 * 1024 + 1);
    writeFileSync(feed, big);
    const summary = path.join(folder, "summary.json");
    writeFileSync(summary, "{}\n");

    const refused = await here.putDebugFile(r.id, "source/feed.csv", feed).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "state" });
    expect(String((refused as Error).message)).toMatch(/larger than debug_file_limit \(1 MB\)/);
    await here.putDebugFile(r.id, "summary.json", summary);

    const { rows } = await here.pool.query<{ name: string }>(`SELECT name FROM ${schema}.debug_files WHERE run_id = $1`, [r.id]);
    expect(rows.map((x) => x.name)).toEqual(["summary.json"]);
    expect(await here.listDebugFiles(r.id)).toEqual(["source/feed.csv", "summary.json"]);
    const local = await here.getDebugFile(r.id, "source/feed.csv");
    expect(local ? Buffer.compare(await buffer(local.open()), big) : null).toBe(0);
    // Another daemon of the cluster has the small file from the database and not the big one.
    expect(await elsewhere.listDebugFiles(r.id)).toEqual(["summary.json"]);
    expect(await elsewhere.getDebugFile(r.id, "source/feed.csv")).toBeNull();
    await here.close();
    await elsewhere.close();
  });

  it("upserts a batch that names an identifier twice: the last entry wins", async () => {
    const store = await PostgresStore.open(PG_URL, { schema: freshSchema() });
    await store.snapshotPut("k", [
      { identifier: "A", values: { v: "1" } },
      { identifier: "A", values: { v: "2" } },
    ]);
    expect(Object.fromEntries(await store.snapshotGet("k", ["A"]))).toEqual({ A: { v: "2" } });
    await store.close();
  });

  it("openStore takes the schema from the URL and says clearly when the server cannot be reached", async () => {
    const schema = freshSchema();
    // A folder of its own: openStore makes its data folder private, and the temp root is shared with every test.
    const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-pg-open-"));
    const store = await openStore({ dataDir, databaseUrl: `${PG_URL}?schema=${schema}` });
    expect(store).toBeInstanceOf(PostgresStore);
    expect((store as PostgresStore).schema).toBe(schema);
    await store.close();
    const bad = openStore({ dataDir, databaseUrl: "postgres://conveyor:very-secret-pw@127.0.0.1:1/none" });
    await expect(bad).rejects.toThrow(/cannot connect to PostgreSQL at 127\.0\.0\.1:1\/none/);
    await expect(bad).rejects.not.toThrow(/very-secret-pw/);
    await expect(openStore({ dataDir, databaseUrl: `${PG_URL}?schema=Bad-Name` })).rejects.toThrow(/schema "Bad-Name" is not allowed/);
  }, 30_000);
});
