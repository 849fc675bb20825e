import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { definitionVersion, toSchedulable } from "../../src/daemon/types.js";
import { SqliteSchedulerState } from "../../src/daemon/scheduler-state.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

describe("SqliteSchedulerState", () => {
  it("keeps fire times, full-run times and skips across a reopen", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-sstate-"));
    let clock = Date.parse("2025-01-01T00:00:00Z");
    const state = SqliteSchedulerState.inDataDir(dir, () => clock);
    expect(await state.lastFireTime("feed")).toBeNull();
    expect(await state.lastFullRun("feed")).toBeNull();
    await state.setLastFullRun("feed", "2025-01-01T00:05:00.000Z");
    await state.setLastFireTime("feed", "2025-01-01T00:10:00.000Z");
    await state.recordSkip("feed", "2025-01-01T00:15:00.000Z", "running");
    clock += 40 * 24 * 3600_000;
    await state.recordSkip("feed", "2025-02-10T00:00:00.000Z", "waiting");
    await state.close();

    const reopened = SqliteSchedulerState.inDataDir(dir, () => clock);
    expect(await reopened.lastFireTime("feed")).toBe("2025-01-01T00:10:00.000Z");
    expect(await reopened.lastFullRun("feed")).toBe("2025-01-01T00:05:00.000Z");
    expect(await reopened.lastFireTime("other")).toBeNull();
    expect((await reopened.skips("feed")).map((s) => s.reason)).toEqual(["waiting", "running"]);
    expect(await reopened.pruneSkips(new Date("2025-01-31T00:00:00Z"))).toBe(1);
    expect((await reopened.skips("feed")).map((s) => s.fireTime)).toEqual(["2025-02-10T00:00:00.000Z"]);
    await reopened.close();
  });

  it("never moves a time backwards, so a late write cannot cause a second catch-up", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-sstate-"));
    const state = SqliteSchedulerState.inDataDir(dir);
    await state.setLastFireTime("feed", "2025-01-01T02:00:00.000Z");
    await state.setLastFireTime("feed", "2025-01-01T01:00:00.000Z");
    await state.setLastFullRun("feed", "2025-01-01T02:00:00.000Z");
    await state.setLastFullRun("feed", "2025-01-01T00:00:00.000Z");
    expect(await state.lastFireTime("feed")).toBe("2025-01-01T02:00:00.000Z");
    expect(await state.lastFullRun("feed")).toBe("2025-01-01T02:00:00.000Z");
    await state.close();
  });

  it("names the file when it cannot be opened", () => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-sstate-"));
    // A directory where the database file should be.
    const file = path.join(dir, "scheduler.db");
    mkdirSync(file);
    expect(() => new SqliteSchedulerState(file)).toThrow(/cannot open the scheduler database .*scheduler\.db/);
  });
});

describe("toSchedulable", () => {
  it("maps a definition and changes its version on any edit, not on key order", () => {
    const def = { active: true, draft: false, schedule: "0 6 * * 1-5", timezone: "", name: "Feed" };
    const mapped = toSchedulable("acct/feed", "acct", def, definitionVersion(def));
    expect(mapped).toMatchObject({ key: "acct/feed", account: "acct", schedule: "0 6 * * 1-5", timezone: "UTC", active: true, draft: false });
    expect(definitionVersion({ name: "Feed", timezone: "", schedule: "0 6 * * 1-5", draft: false, active: true })).toBe(mapped.version);
    expect(definitionVersion({ ...def, name: "Feed 2" })).not.toBe(mapped.version);
    expect(definitionVersion({ ...def, extra: undefined })).toBe(mapped.version);
  });
});
