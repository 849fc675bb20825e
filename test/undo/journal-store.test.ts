import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PlannedOp } from "../../src/pipeline/planned-op.js";
import { emptyCounts, type RunRecord, type StateStore } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { decodeChunk } from "../../src/undo/journal-entry.js";
import { UndoJournalWriter } from "../../src/undo/journal-writer.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";

/** The undo journal in both state stores: written in chunks, read back in order, deleted with its run by retention; and its size. */
const pgs = new PgSchemas();
afterAll(async () => pgs.end());

function record(id: string, started: string): RunRecord {
  return {
    id, automation: "a", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started, finished: started, outcome: "success", counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0,
    files: [], debug_files: [], guard: null, error: null, heartbeat: null,
  };
}

const update = (i: number): PlannedOp => ({
  kind: "update", action: "edit", identifier: `G${String(i).padStart(12, "0")}`, line: i + 2,
  changes: [
    { field: "price", before: ((i % 9000) / 100 + 1).toFixed(2), after: ((i % 9000) / 100 + 2).toFixed(2) },
    { field: "stock", before: String((i * 31) % 500), after: String(((i * 31) % 500) + 1) },
    { field: "title", before: `Product ${i}`, after: `Product ${i}`, same: true },
  ],
});

async function journalOf(store: StateStore, count: number): Promise<UndoJournalWriter> {
  const writer = new UndoJournalWriter(store, "r1");
  const sink = writer.sink(0, { add: () => undefined }, () => undefined);
  for (let i = 0; i < count; i++) sink.add(update(i));
  sink.add({ kind: "create", action: "start", identifier: "N1", line: 1, changes: [{ field: "title", before: null, after: "New" }] });
  sink.add({ kind: "remove", action: "end", identifier: "GONE", line: null, changes: [] });
  await writer.flush();
  return writer;
}

describe.each([
  ["SQLite", async () => new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-journal-")), "state.db"))],
  ["PostgreSQL", async () => PostgresStore.open(PG_URL, { schema: pgs.fresh() })],
])("the undo journal in %s", (_name, open) => {
  it("is stored in chunks, read back in order, and deleted with its run", async () => {
    const store = await open();
    try {
      await store.createRun(record("r1", "2020-01-01T00:00:00.000Z"));
      const writer = await journalOf(store, 12_000);
      const chunks = await store.getUndoChunks("r1");
      expect(chunks.length).toBe(writer.chunksStored);
      expect(chunks.length).toBeGreaterThan(1);
      const entries = chunks.flatMap((c, i) => decodeChunk(c, `chunk ${i}`));
      expect(entries).toHaveLength(12_002);
      // Only the changed fields, with before and after; the create by its identifier; the end with no record read.
      expect(entries[5]).toEqual({ c: 0, i: "G000000000005", a: "edit", f: [["price", "1.05", "2.05"], ["stock", "155", "156"]] });
      expect(entries[12_000]).toEqual({ c: 0, i: "N1", a: "start" });
      expect(entries[12_001]).toEqual({ c: 0, i: "GONE", a: "end" });
      await store.pruneRuns(new Date("2021-01-01T00:00:00.000Z"));
      expect(await store.getUndoChunks("r1")).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe("the undo journal's size", () => {
  it("keeps a million changed fields within tens of megabytes", async () => {
    const store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-journal-")), "state.db"));
    try {
      await store.createRun(record("r1", new Date().toISOString()));
      // Two changed fields a record: half a million records.
      const writer = await journalOf(store, 500_000);
      expect(writer.count).toBe(500_002);
      expect(writer.bytes).toBeLessThan(30 * 2 ** 20);
    } finally {
      await store.close();
    }
  }, 120_000);
});
