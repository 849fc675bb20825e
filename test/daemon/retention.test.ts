import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { pruneOnce } from "../../src/daemon/retention.js";
import { SqliteSchedulerState } from "../../src/daemon/scheduler-state.js";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";
import { SqliteStore } from "../../src/state/sqlite.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const record = (id: string, started: string): RunRecord => ({
  id, automation: "a", account: "demo", mode: "debug", trigger: "manual", diff: false, force: false, notify: false, email: null,
  started, finished: started, outcome: "success", counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0, files: [],
  debug_files: ["summary.json"], guard: null, error: null, heartbeat: null,
});

it("forgets runs past run_retention with their folders, and folders no run owns", async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-retention-"));
  dirs.push(dataDir);
  const store = new SqliteStore(path.join(dataDir, "state.db"));
  const state = SqliteSchedulerState.inDataDir(dataDir);
  const folder = (id: string): string => path.join(dataDir, "runs", id, "debug");
  for (const [id, started] of [["old", "2026-01-01T00:00:00.000Z"], ["new", "2026-11-20T00:00:00.000Z"]] as const) {
    await store.createRun(record(id, started));
    mkdirSync(folder(id), { recursive: true });
    writeFileSync(path.join(folder(id), "summary.json"), "{}");
  }
  mkdirSync(folder("orphan"), { recursive: true });
  const pruned = await pruneOnce({
    store, schedulerState: state, dataDir, retentionMs: 30 * 86_400_000, logger: silentLogger, now: () => new Date("2026-11-21T00:00:00Z"),
  });
  expect(pruned).toEqual({ runs: 1, folders: 2 });
  expect(await store.getRun("old")).toBeNull();
  expect(await store.getRun("new")).not.toBeNull();
  expect(existsSync(folder("old"))).toBe(false);
  expect(existsSync(folder("orphan"))).toBe(false);
  expect(existsSync(path.join(folder("new"), "summary.json"))).toBe(true);
  await state.close();
  await store.close();
});
