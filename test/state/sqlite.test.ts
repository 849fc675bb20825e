import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { SqliteStore } from "../../src/state/sqlite.js";
import { bulkSuite } from "./bulk-suite.js";
import { logPagesSuite, oldRowsBeforePages, record } from "./log-pages-suite.js";
import { storeSuite } from "./store-suite.js";

const fresh = async (): Promise<SqliteStore> => new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db"));
storeSuite("sqlite", fresh);
bulkSuite("sqlite", fresh);
logPagesSuite("sqlite", fresh);

it("sqlite state survives a reopen", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  const a = new SqliteStore(file);
  await a.ledgerAdd("k", [{ path: "x", size: 1, modified: null }]);
  await a.close();
  const b = new SqliteStore(file);
  expect(await b.ledgerHas("k", { path: "x", size: 1, modified: null })).toBe(true);
  await b.close();
});

it("reads a log record stored whole by an older version as it was", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  await new SqliteStore(file).close();
  const record = {
    id: "old-1", action: "edit", channel_id: "", context: "", field_data: "", identifier: "SKU1", job_id: "run-1", integration: "conveyor",
    message: "{}", method: "auto", operation: "import", request_id: "bulk-1", result: "warning", sd_user_id: "demo", timestamp: "2026-11-21 10:00:00",
    type: "item", instance: 0, log_level: 1, sd_acct_id: 0,
  };
  const raw = new Database(file);
  raw.prepare("INSERT INTO logs (account, id, identifier, job_id, request_id, timestamp, body) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run("demo", record.id, record.identifier, record.job_id, record.request_id, record.timestamp, JSON.stringify(record));
  raw.close();
  const store = new SqliteStore(file);
  const page = await store.searchLogs({ account: "demo", identifier: ["SKU1"] });
  expect(page.logs.map((l) => JSON.stringify(l))).toEqual([JSON.stringify(record)]);
  await store.close();
});

it("reads the rows of table logs after the pages, as one newest-first list, and forgets them by retention", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  await new SqliteStore(file).close();
  // As the version before pages wrote them: the columns and a compact body, or a whole one.
  const old = Array.from({ length: 1200 }, (_, i) => record(`${i}-old`, i, { job_id: "run-old", timestamp: i < 600 ? "2026-01-01 00:00:00" : "2026-11-20 00:00:00" }));
  const raw = new Database(file);
  const insert = raw.prepare("INSERT INTO logs (account, id, identifier, job_id, request_id, timestamp, body) VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const [i, r] of old.entries()) {
    const compact = JSON.stringify({ action: r.action, integration: r.integration, message: r.message, operation: r.operation, result: r.result, type: r.type });
    insert.run("demo", r.id, r.identifier, r.job_id, r.request_id, r.timestamp, i % 2 ? compact : JSON.stringify(r));
  }
  raw.close();
  const store = new SqliteStore(file);
  await oldRowsBeforePages(store, old);
});

it("moves snapshot entries of the layout before numbered keys into it, times and sources kept", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  await new SqliteStore(file).close();
  // The file as the version before the numbered keys left it: table snapshots, keyed by its key's text.
  const raw = new Database(file);
  const version = Number(raw.pragma("user_version", { simple: true }));
  raw.exec(`DROP TABLE snapshot_entries; DROP TABLE snapshot_keys;
    CREATE TABLE snapshots (key TEXT NOT NULL, identifier TEXT NOT NULL, "values" TEXT NOT NULL, updated TEXT NOT NULL, source TEXT, PRIMARY KEY (key, identifier)) WITHOUT ROWID;`);
  const insert = raw.prepare(`INSERT INTO snapshots (key, identifier, "values", updated, source) VALUES (?, ?, ?, ?, ?)`);
  insert.run("feed#0", "SKU-1", '{"price":"9.99"}', "2026-11-20T10:00:00.000Z", "fp-1");
  insert.run("feed#0", "SKU-2", '{"price":"5"}', "2026-11-28T10:00:00.123Z", null);
  insert.run("feed#export#0", "SKU-1", '{"h":"abc"}', "2026-11-28T10:00:00.000Z", null);
  raw.pragma(`user_version = ${version - 1}`);
  raw.close();

  const store = new SqliteStore(file);
  expect(Object.fromEntries(await store.snapshotGet("feed#0", ["SKU-1", "SKU-2", "SKU-3"]))).toEqual({ "SKU-1": { price: "9.99" }, "SKU-2": { price: "5" } });
  expect(Object.fromEntries(await store.snapshotSources("feed#0", ["SKU-1", "SKU-2"]))).toEqual({ "SKU-1": "fp-1" });
  expect(await store.snapshotCount("feed#export#0")).toBe(1);
  // The times came over to the millisecond: a prune at SKU-2's own time keeps it, one a millisecond later does not.
  expect(await store.snapshotPruneBefore("feed#0", "2026-11-28T10:00:00.123Z")).toBe(1);
  expect(await store.snapshotCount("feed#0")).toBe(1);
  expect(await store.snapshotPruneBefore("feed#0", "2026-11-28T10:00:00.124Z")).toBe(1);
  expect(await store.snapshotCount("feed#export#0")).toBe(1);
  await expect(store.snapshotPruneBefore("feed#0", "yesterday")).rejects.toThrow(/ISO 8601/);
  await store.close();
  const check = new Database(file, { readonly: true });
  expect(check.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'snapshots'").pluck().get()).toBe(0);
  check.close();
});

it("prunes the identifier keys of a page written before identifier ranges", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-state-")), "state.db");
  const store = new SqliteStore(file);
  const records = Array.from({ length: 300 }, (_, i) => record(`run-old-${i + 1}`, i, { job_id: "run-old", identifier: `P${String(i).padStart(4, "0")}`, timestamp: "2026-01-01 00:00:00" }));
  await store.addLogs("demo", records);
  await store.close();
  // As the version before the ranges wrote it: no range, a key for each identifier.
  const raw = new Database(file);
  const seq = raw.prepare("SELECT seq FROM log_pages").pluck().get() as number;
  raw.prepare("UPDATE log_pages SET key_min = NULL, key_max = NULL").run();
  const key = raw.prepare("INSERT INTO log_keys (account, key, page) VALUES ('demo', ?, ?)");
  for (const r of records) key.run(`i${r.identifier}`, seq);
  raw.close();
  const again = new SqliteStore(file);
  expect((await again.searchLogs({ account: "demo", identifier: ["P0042"] })).found).toBe(1);
  await again.pruneRuns(new Date("2026-06-01T00:00:00.000Z"));
  await again.close();
  const check = new Database(file, { readonly: true });
  expect(check.prepare("SELECT count(*) FROM log_keys").pluck().get()).toBe(0);
  expect(check.prepare("SELECT count(*) FROM log_pages").pluck().get()).toBe(0);
  check.close();
});
