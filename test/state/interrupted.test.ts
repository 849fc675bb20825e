import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { emptyCounts, type RunRecord, type StateStore } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";

/**
 * The record of a run whose worker died says what reached the service: both
 * stores keep what the apply stages wrote (the files whose result was read,
 * those sent with their result unknown) and turn it into the error message.
 */
const pgs = new PgSchemas();
afterAll(() => pgs.end());

function open(run: Partial<RunRecord>): RunRecord {
  return {
    id: `r-${Math.random().toString(36).slice(2)}`, automation: "a1", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started: "2026-01-01T00:00:00.000Z", finished: null, outcome: null, counts: { ...emptyCounts(), rows: 3000, create: 3000 }, requests: { read: 0, write: 0 }, bytes: 0,
    files: [], debug_files: [], guard: null, error: null, heartbeat: "2026-01-01T00:00:00.000Z", ...run,
  };
}

const stores: Array<[string, () => Promise<StateStore>]> = [
  ["sqlite", async () => new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-interrupted-")), "state.db"))],
  ["postgres", async () => PostgresStore.open(PG_URL, { schema: pgs.fresh() })],
];

describe.each(stores)("interrupted runs' records (%s)", (_name, openStore) => {
  it("say what the service confirmed and which file's result is unknown", async () => {
    const store = await openStore();
    try {
      const run = open({});
      await store.createRun(run);
      await store.updateRun(run.id, {
        applied: { files: 1, planned_files: 3, created: 800, updated: 0, removed: 0, failed: 200 },
        unconfirmed_files: [{ name: "bulk-2.csv", rows: 1000, job: "b-42" }],
      });
      const [marked] = await store.markInterrupted(new Date("2026-01-02T00:00:00.000Z"));
      expect(marked?.id).toBe(run.id);
      const stored = await store.getRun(run.id);
      expect(stored?.outcome).toBe("failed");
      expect(stored?.applied).toEqual({ files: 1, planned_files: 3, created: 800, updated: 0, removed: 0, failed: 200 });
      expect(stored?.unconfirmed_files).toEqual([{ name: "bulk-2.csv", rows: 1000, job: "b-42" }]);
      expect(stored?.error?.code).toBe("interrupted");
      expect(stored?.error?.message).toContain("the service confirmed 800 created, 200 failed in 1 of 3 bulk files");
      expect(stored?.error?.message).toContain("1 file was sent and its result is unknown (bulk-2.csv, 1000 rows, job b-42)");
      expect(stored?.error?.message).toContain("a re-run converges");
      expect(stored?.error?.message).not.toContain("nothing was committed");
      expect(stored?.error?.hint).toMatch(/Run the automation again/);
    } finally {
      await store.close();
    }
  });

  it("say nothing reached the service when the run stopped before it sent a file", async () => {
    const store = await openStore();
    try {
      const run = open({});
      await store.createRun(run);
      await store.markInterrupted(new Date("2026-01-02T00:00:00.000Z"));
      expect((await store.getRun(run.id))?.error?.message).toMatch(/before it sent anything to the service/);
    } finally {
      await store.close();
    }
  });
});
