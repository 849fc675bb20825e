import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import { describe, expect, it, beforeEach, afterEach } from "vitest";
import { emptyCounts, type LogRecord, type RunRecord, type StateStore } from "../../src/state/index.js";

/** The one store suite: every implementation of StateStore runs it. */
export function storeSuite(name: string, open: () => Promise<StateStore>): void {
  describe(`state store: ${name}`, () => {
    let store: StateStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const run = (over: Partial<RunRecord> = {}): RunRecord => ({
      id: `run-${Math.random().toString(36).slice(2)}`,
      automation: "a1",
      account: "demo",
      mode: "prod",
      trigger: "manual",
      diff: false,
      force: false,
      notify: false,
      email: null,
      started: new Date().toISOString(),
      finished: null,
      outcome: null,
      counts: emptyCounts(),
      requests: { read: 0, write: 0 },
      bytes: 0,
      files: [],
      debug_files: [],
      guard: null,
      error: null,
      heartbeat: new Date().toISOString(),
      ...over,
    });

    it("records a run and merges updates", async () => {
      const r = run();
      await store.createRun(r);
      await store.updateRun(r.id, { outcome: "success", finished: "2026-11-21T10:00:00.000Z", counts: { ...emptyCounts(), rows: 5 } });
      const back = await store.getRun(r.id);
      expect(back?.outcome).toBe("success");
      expect(back?.counts.rows).toBe(5);
      expect(back?.automation).toBe("a1");
      expect(await store.getRun("missing")).toBeNull();
      await expect(store.updateRun("missing", { outcome: "failed" })).rejects.toThrow(/does not exist/);
    });

    it("keeps a running run's progress with its heartbeat, and drops it from the record once it finished", async () => {
      const r = run();
      await store.createRun(r);
      const progress = { stage: "read", rows: 1500, files: null, rate: 3000, at: new Date(Date.now() + 5_000).toISOString() };
      await store.saveProgress(r.id, progress);
      expect(await store.getRun(r.id)).toMatchObject({ progress, heartbeat: progress.at });
      expect((await store.listRuns({ automation: "a1" })).find((x) => x.id === r.id)?.progress).toEqual(progress);
      // A write of the record does not carry the progress into its body, nor lose it.
      await store.updateRun(r.id, { counts: { ...r.counts, rows: 1500 } });
      expect((await store.getRun(r.id))?.progress).toEqual(progress);
      await store.updateRun(r.id, { outcome: "success", finished: new Date().toISOString(), heartbeat: null });
      await store.saveProgress(r.id, { ...progress, rows: 9 });
      const done = await store.getRun(r.id);
      expect(done?.progress).toBeUndefined();
      expect(done?.heartbeat).toBeNull();
    });

    it("lists runs newest first, by automation", async () => {
      await store.createRun(run({ id: "r1", started: "2026-11-20T00:00:00.000Z" }));
      await store.createRun(run({ id: "r2", started: "2026-11-21T00:00:00.000Z" }));
      await store.createRun(run({ id: "r3", automation: "other" }));
      expect((await store.listRuns({ automation: "a1" })).map((r) => r.id)).toEqual(["r2", "r1"]);
      expect(await store.listRuns({ automation: "a1", limit: 1 })).toHaveLength(1);
    });

    it("marks runs whose heartbeat stopped as interrupted, and leaves live ones", async () => {
      await store.createRun(run({ id: "dead", heartbeat: "2026-01-01T00:00:00.000Z" }));
      await store.createRun(run({ id: "alive", heartbeat: new Date(Date.now() + 60_000).toISOString() }));
      const marked = await store.markInterrupted(new Date());
      expect(marked.map((r) => r.id)).toEqual(["dead"]);
      const dead = await store.getRun("dead");
      expect(dead?.outcome).toBe("failed");
      expect(dead?.error?.code).toBe("interrupted");
      expect((await store.getRun("alive"))?.outcome).toBeNull();
    });

    it("marks the runs named dead at once, whatever their heartbeat, and no finished one", async () => {
      const fresh = new Date(Date.now() + 60_000).toISOString();
      await store.createRun(run({ id: "gone", heartbeat: fresh }));
      await store.createRun(run({ id: "alive", heartbeat: fresh }));
      await store.createRun(run({ id: "ended", heartbeat: null, finished: "2026-11-20T00:01:00.000Z", outcome: "success" }));
      const marked = await store.markInterrupted(new Date(Date.now() - 60_000), ["gone", "ended", "unknown"]);
      expect(marked.map((r) => r.id)).toEqual(["gone"]);
      expect(await store.getRun("gone")).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
      expect((await store.getRun("alive"))?.outcome).toBeNull();
      expect((await store.getRun("ended"))?.outcome).toBe("success");
    });

    it("derives the seed's status object and resets one half", async () => {
      await store.createRun(run({ id: "p1", mode: "prod", started: "2026-11-20T00:00:00.000Z", finished: "2026-11-20T00:01:00.000Z", outcome: "success" }));
      await store.createRun(run({ id: "d1", mode: "debug", started: "2026-11-21T00:00:00.000Z", finished: "2026-11-21T00:01:00.000Z", outcome: "failed", debug_files: ["summary.json"] }));
      const status = await store.status("a1");
      expect(status).toEqual({
        debug_files: ["summary.json"],
        last_run_id: "d1",
        last_run_start_debug: "2026-11-21T00:00:00.000Z",
        last_run_finish_debug: "2026-11-21T00:01:00.000Z",
        last_run_success_debug: false,
        last_run_start_prod: "2026-11-20T00:00:00.000Z",
        last_run_finish_prod: "2026-11-20T00:01:00.000Z",
        last_run_success_prod: true,
      });
      await store.resetStatus("a1", "debug");
      const after = await store.status("a1");
      expect(after.last_run_start_debug).toBeNull();
      expect(after.debug_files).toEqual([]);
      expect(after.last_run_success_prod).toBe(true);
    });

    it("keeps each half of the status however many runs of the other mode came after it", async () => {
      await store.createRun(run({ id: "d-old", mode: "debug", started: "2026-11-01T00:00:00.000Z", finished: "2026-11-01T00:01:00.000Z", outcome: "success", debug_files: ["plan.csv"] }));
      // A week of a */30 schedule after one debug run.
      for (let i = 0; i < 250; i++) {
        const started = new Date(Date.parse("2026-11-02T00:00:00.000Z") + i * 1_800_000).toISOString();
        await store.createRun(run({ id: `p${i}`, mode: "prod", started, finished: started, outcome: "success" }));
      }
      const status = await store.status("a1");
      expect(status.last_run_start_debug).toBe("2026-11-01T00:00:00.000Z");
      expect(status.debug_files).toEqual(["plan.csv"]);
      expect(status.last_run_id).toBe("p249");
      await store.resetStatus("a1", "debug");
      await store.createRun(run({ id: "d-new", mode: "debug", started: new Date(Date.now() + 60_000).toISOString(), outcome: null }));
      expect((await store.status("a1")).last_run_id).toBe("d-new");
    });

    it("keeps an event run's events and finds its runs by event, until retention forgets them", async () => {
      await store.createRun(run({ id: "ev-1", trigger: "event", events: ["evt_1", "evt_2", "evt_2"], started: "2026-01-01T00:00:00.000Z", finished: "2026-01-01T00:01:00.000Z", outcome: "success" }));
      await store.createRun(run({ id: "ev-2", trigger: "event", events: ["evt_2"], started: "2026-11-20T00:00:00.000Z" }));
      expect((await store.getRun("ev-1"))?.events).toEqual(["evt_1", "evt_2", "evt_2"]);
      expect((await store.listRuns({ event: "evt_2" })).map((r) => r.id)).toEqual(["ev-2", "ev-1"]);
      expect((await store.listRuns({ event: "evt_1", account: "demo" })).map((r) => r.id)).toEqual(["ev-1"]);
      expect(await store.listRuns({ event: "evt_none" })).toEqual([]);
      await store.pruneRuns(new Date("2026-06-01T00:00:00.000Z"));
      expect((await store.listRuns({ event: "evt_2" })).map((r) => r.id)).toEqual(["ev-2"]);
    });

    it("forgets runs and their log records past the retention, never an open run", async () => {
      await store.createRun(run({ id: "old", started: "2026-01-01T00:00:00.000Z", finished: "2026-01-01T00:01:00.000Z", outcome: "success" }));
      await store.createRun(run({ id: "old-open", started: "2026-01-01T00:00:00.000Z" }));
      await store.createRun(run({ id: "new", started: "2026-11-20T00:00:00.000Z", finished: "2026-11-20T00:01:00.000Z", outcome: "success" }));
      const entry = (id: string, timestamp: string): LogRecord => ({
        id, action: "edit", channel_id: "", context: "", field_data: "", identifier: "SKU1", job_id: id, integration: "conveyor",
        message: "{}", method: "auto", operation: "import", request_id: "", result: "success", sd_user_id: "demo", timestamp,
        type: "item", instance: 0, log_level: 1, sd_acct_id: 0,
      });
      await store.addLogs("demo", [entry("old", "2026-01-01 00:00:30"), entry("new", "2026-11-20 00:00:30")]);
      expect(await store.pruneRuns(new Date("2026-06-01T00:00:00.000Z"))).toBe(1);
      expect(await store.getRun("old")).toBeNull();
      expect(await store.getRun("old-open")).not.toBeNull();
      expect(await store.getRun("new")).not.toBeNull();
      const logs = await store.searchLogs({ account: "demo", identifier: ["SKU1"] });
      expect(logs.logs.map((l) => l.job_id)).toEqual(["new"]);
    });

    it("keeps snapshots per key, and a full run prunes what it did not see", async () => {
      await store.snapshotPut("k", [
        { identifier: "A", values: { stock: "1" } },
        { identifier: "B", values: { stock: "2" } },
      ]);
      await store.snapshotPut("other", [{ identifier: "A", values: { stock: "9" } }]);
      const got = await store.snapshotGet("k", ["A", "B", "C"]);
      expect(Object.fromEntries(got)).toEqual({ A: { stock: "1" }, B: { stock: "2" } });
      await new Promise((r) => setTimeout(r, 5));
      const since = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      await store.snapshotPut("k", [{ identifier: "A", values: { stock: "3" } }]);
      expect(await store.snapshotPruneBefore("k", since)).toBe(1);
      expect(await store.snapshotCount("k")).toBe(1);
      await store.snapshotDelete("k", ["A"]);
      expect(await store.snapshotCount("k")).toBe(0);
      expect(await store.snapshotCount("other")).toBe(1);
    });

    it("looks snapshots up in batches larger than one statement allows", async () => {
      const entries = Array.from({ length: 1200 }, (_, i) => ({ identifier: String(i).padStart(5, "0"), values: { v: String(i) } }));
      await store.snapshotPut("big", entries);
      const got = await store.snapshotGet("big", entries.map((e) => e.identifier));
      expect(got.size).toBe(1200);
      expect(got.get("00042")).toEqual({ v: "42" });
    });

    it("gives a snapshot entry back as the exact JSON text of the values stored", async () => {
      const values = { title: 'Café "Ölkanne" \\ 2', stock: "0700", price: "1e3", empty: "" };
      await store.snapshotPut("text", [{ identifier: "A", values }]);
      const text = await store.snapshotText("text", ["A", "missing"]);
      expect([...text.keys()]).toEqual(["A"]);
      expect(text.get("A")).toBe(JSON.stringify(values));
    });

    it("keeps values given as JSON text as that text, beside entries given as values, the later entry winning", async () => {
      const values = { title: 'Café "Ölkanne" \\ 2', stock: "0700" };
      await store.snapshotPut("given", [
        { identifier: "A", valuesText: JSON.stringify(values), source: "srcA" },
        { identifier: "B", values: { stock: "2" } },
        { identifier: "B", valuesText: JSON.stringify({ stock: "3" }) },
      ]);
      expect((await store.snapshotText("given", ["A"])).get("A")).toBe(JSON.stringify(values));
      expect(Object.fromEntries(await store.snapshotGet("given", ["A", "B"]))).toEqual({ A: values, B: { stock: "3" } });
      expect([...(await store.snapshotSources("given", ["A", "B"]))]).toEqual([["A", "srcA"]]);
    });

    it("keeps each entry's source fingerprint with its values, and a put without one clears it", async () => {
      await store.snapshotPut("src", [
        { identifier: "A", values: { stock: "1" }, source: "defA" },
        { identifier: "B", values: { stock: "2" }, source: "defB" },
        { identifier: "C", values: { stock: "3" } },
      ]);
      expect([...(await store.snapshotSources("src", ["A", "B", "C", "missing"]))].sort()).toEqual([["A", "defA"], ["B", "defB"]]);
      await store.snapshotPut("src", [{ identifier: "A", values: { stock: "4" } }, { identifier: "C", values: { stock: "3" }, source: "defC" }]);
      expect([...(await store.snapshotSources("src", ["A", "B", "C"]))].sort()).toEqual([["B", "defB"], ["C", "defC"]]);
      expect((await store.snapshotGet("src", ["A"])).get("A")).toEqual({ stock: "4" });
    });

    it("pages every entry's source fingerprint in identifier order, null where an entry has none", async () => {
      const entries = Array.from({ length: 25 }, (_, i) => ({ identifier: `K${String(24 - i).padStart(2, "0")}`, values: { v: String(i) }, ...(i % 5 === 0 ? {} : { source: `src${i}` }) }));
      await store.snapshotPut("pages", entries);
      await store.snapshotPut("other", [{ identifier: "K00", values: {}, source: "elsewhere" }]);
      const pages: Array<Array<[string, string | null]>> = [];
      for await (const page of store.snapshotSourcePages("pages", 10)) pages.push(page);
      expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
      const expected = entries.map((e): [string, string | null] => [e.identifier, e.source ?? null]).sort((a, b) => (a[0] < b[0] ? -1 : 1));
      expect(pages.flat()).toEqual(expected);
      const none: unknown[] = [];
      for await (const page of store.snapshotSourcePages("missing")) none.push(page);
      expect(none).toEqual([]);
    });

    it("keys the ledger by path, size and modification time", async () => {
      const e = { path: "in/a.csv", size: 10, modified: "2026-11-21T00:00:00.000Z" };
      expect(await store.ledgerHas("k", e)).toBe(false);
      await store.ledgerAdd("k", [e]);
      await store.ledgerAdd("k", [e]);
      expect(await store.ledgerHas("k", e)).toBe(true);
      expect(await store.ledgerHas("k", { ...e, size: 11 })).toBe(false);
      expect(await store.ledgerHas("other", e)).toBe(false);
    });

    it("searches logs with the seed's rules and caps found at 1001", async () => {
      const log = (i: number, over: Partial<LogRecord> = {}): LogRecord => ({
        id: `log-${i}`, action: "edit", channel_id: "", context: "", field_data: "", identifier: `SKU${i % 3}`,
        job_id: "run-1", integration: "conveyor", message: "{}", method: "auto", operation: "import", request_id: "bulk-1",
        result: "success", sd_user_id: "demo", timestamp: "2026-11-21 10:00:00", type: "item", instance: 0, log_level: 1, sd_acct_id: 1, ...over,
      });
      await store.addLogs("demo", Array.from({ length: 1100 }, (_, i) => log(i)));
      await store.addLogs("other", [log(5000, { identifier: "SKU0" })]);
      const all = await store.searchLogs({ account: "demo", records: 50 });
      expect(all.found).toBe(1001);
      expect(all.found_more_logs).toBe(true);
      expect(all.logs).toHaveLength(50);
      const one = await store.searchLogs({ account: "demo", identifier: ["SKU1"], start: 2, records: 5 });
      expect(one.found).toBe(367);
      expect(one.found_more_logs).toBe(false);
      expect(one.logs.every((l) => l.identifier === "SKU1")).toBe(true);
      // refining fields count only together with a search field
      expect((await store.searchLogs({ account: "demo", result: "error" })).found).toBe(1001);
      expect((await store.searchLogs({ account: "demo", identifier: ["SKU1"], result: "error" })).found).toBe(0);
      // Pages lie within the capped matches, as found tells a client; older records are reached through the filters.
      const last = await store.searchLogs({ account: "demo", start: 995, records: 20 });
      expect(last.logs.map((l) => l.id)).toEqual(Array.from({ length: 7 }, (_, i) => `log-${104 - i}`));
      // job_id and request_id narrow next to a search field.
      expect((await store.searchLogs({ account: "demo", identifier: ["SKU2"], job_id: "run-2" })).found).toBe(0);
      expect((await store.searchLogs({ account: "demo", request_id: "bulk-1", job_id: "run-1", records: 1 })).found).toBe(1001);
    });

    it("keeps a run's debug files for every reader, and refuses names that climb out", async () => {
      const r = run({ id: "run-debug-1" });
      await store.createRun(r);
      const dir = mkdtempSync(path.join(tmpdir(), "conveyor-debug-"));
      const summary = path.join(dir, "summary.json");
      const feed = path.join(dir, "feed.csv");
      writeFileSync(summary, '{"outcome":"success"}\n');
      writeFileSync(feed, "sku;qty\nA;1\n");
      await store.putDebugFile(r.id, "summary.json", summary);
      await store.putDebugFile(r.id, "source/feed.csv", feed);
      expect(await store.listDebugFiles(r.id)).toEqual(["source/feed.csv", "summary.json"]);
      const got = await store.getDebugFile(r.id, "source/feed.csv");
      expect(got?.size).toBe(12);
      expect(got ? await text(got.open()) : null).toBe("sku;qty\nA;1\n");
      expect(await store.getDebugFile(r.id, "plan.csv")).toBeNull();
      expect(await store.listDebugFiles("run-without-files")).toEqual([]);
      await expect(store.getDebugFile(r.id, "../state.db")).rejects.toThrow(/not allowed/);
      await expect(store.putDebugFile(r.id, "/etc/passwd", feed)).rejects.toThrow(/not allowed/);
    });

    it("keeps an automation's metadata", async () => {
      expect(await store.getMetadata("a1")).toEqual({});
      await store.setMetadata("a1", { oauth: { token: "t", expires: 1 } });
      expect(await store.getMetadata("a1")).toEqual({ oauth: { token: "t", expires: 1 } });
    });
  });
}
