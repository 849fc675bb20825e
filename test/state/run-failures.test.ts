import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { emptyCounts, type LogRecord, type RunRecord, type StateStore } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";

/**
 * What `conveyor logs` and the run record's `failures` rely on, in both
 * stores: a finished run keeps its failures, and a run's log records are
 * found by its id alone (`run`), while the seed's job_id still refines only.
 */
const pgs = new PgSchemas();
const open: Record<string, () => Promise<StateStore>> = {
  sqlite: async () => new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-failures-")), "state.db")),
  postgres: async () => PostgresStore.open(PG_URL, { schema: pgs.fresh() }),
};

afterEach(async () => {
  await pgs.dropAll();
});
afterAll(async () => {
  await pgs.end();
});

function run(id: string, started: string, finished: string): RunRecord {
  return {
    id, automation: "a1", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started, finished: null, outcome: null, counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0,
    files: [], debug_files: [], guard: null, error: null, heartbeat: finished,
  };
}

function log(id: string, jobId: string, identifier: string, timestamp: string): LogRecord {
  return {
    id, action: "add", channel_id: "", context: "", field_data: "", identifier, job_id: jobId, integration: "conveyor",
    message: JSON.stringify({ error: "the title field is required to create an item" }), method: "auto", operation: "import",
    request_id: "b1", result: "error", sd_user_id: "demo", timestamp, type: "item", instance: 0, log_level: 3, sd_acct_id: 0,
  };
}

for (const [name, openStore] of Object.entries(open)) {
  describe(`state store ${name}: a run's failures and its log records`, () => {
    it("keeps the failures of a finished run, and reads them back", async () => {
      const store = await openStore();
      try {
        await store.createRun(run("r-1", "2026-11-25T10:00:00.250Z", "2026-11-25T10:00:00.250Z"));
        const failures = [{ message: "the title field is required to create an item", count: 2, examples: ["SKU-1", "SKU-2"] }];
        await store.updateRun("r-1", { outcome: "failed", finished: "2026-11-25T10:00:02.500Z", failures, error: { code: "records_failed", message: "2 records refused", hint: "fix them" } });
        const back = await store.getRun("r-1");
        expect(back?.failures).toEqual(failures);
        expect((await store.listRuns({ automation: "a1" }))[0]?.failures).toEqual(failures);
      } finally {
        await store.close();
      }
    });

    it("finds one run's log records by its id, newest first, and keeps job_id a refinement for the seed's search", async () => {
      const store = await openStore();
      try {
        await store.addLogs("demo", [
          log("l1", "r-1", "SKU-1", "2026-11-25 10:00:00"),
          log("l2", "r-2", "SKU-1", "2026-11-25 10:00:01"),
          log("l3", "r-1", "SKU-2", "2026-11-25 10:00:02"),
          log("l4", "r-1", "SKU-3", "2026-11-25 10:00:09"),
        ]);
        const one = { account: "demo", run: "r-1" };
        expect((await store.searchLogs(one)).logs.map((l) => l.id)).toEqual(["l4", "l3", "l1"]);
        expect((await store.searchLogs({ ...one, identifier: ["SKU-2"] })).logs.map((l) => l.id)).toEqual(["l3"]);
        expect((await store.searchLogs({ ...one, records: 1 })).logs.map((l) => l.id)).toEqual(["l4"]);
        expect((await store.searchLogs({ ...one, result: "success" })).found).toBe(0);
        expect((await store.searchLogs({ account: "other", run: "r-1" })).found).toBe(0);
        expect((await store.searchLogs({ account: "demo", job_id: "r-1" })).found).toBe(4);
      } finally {
        await store.close();
      }
    });
  });
}
