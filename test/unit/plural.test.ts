import { describe, expect, it } from "vitest";
import { progressFields, type ProgressState } from "../../src/cli-output/progress.js";
import { runSummary } from "../../src/cli-output/summary.js";
import { count, countLarge, noun } from "../../src/plural.js";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";

describe("counts with their nouns", () => {
  it("says one in the singular and every other figure, zero too, in the plural", () => {
    expect(count(1, "write")).toBe("1 write");
    expect(count(2, "write")).toBe("2 writes");
    expect(count(0, "row")).toBe("0 rows");
    expect(noun(1, "byte")).toBe("byte");
    expect(count(1, "entry", "entries")).toBe("1 entry");
    expect(count(3, "entry", "entries")).toBe("3 entries");
    expect(countLarge(1_200_000, "row")).toBe("1,200,000 rows");
    expect(countLarge(1, "row")).toBe("1 row");
  });

  it("reads right in the run summary and the progress line for one of each", () => {
    const run: RunRecord = {
      id: "r20261125T101500-abc123", automation: "stock", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
      started: "2026-11-25T10:15:00.000Z", finished: "2026-11-25T10:15:01.000Z", outcome: "success", counts: { ...emptyCounts(), rows: 1, create: 1 },
      requests: { read: 1, write: 1 }, bytes: 1, files: [{ name: "one.csv", size: 1, sha256: "", modified: null }], debug_files: [], guard: null, error: null, heartbeat: null,
    };
    const text = runSummary(run);
    expect(text).toContain("1 read, 1 write");
    expect(text).toContain("one.csv (1 byte)");
    expect(runSummary({ ...run, requests: { read: 2, write: 0 }, files: [{ name: "two.csv", size: 20, sha256: "", modified: null }] })).toContain("2 reads, 0 writes");
    const state: ProgressState = { readingSince: null, rate: 0 };
    const one = progressFields({ stage: "apply", rows: 1, done: 0, total: 1 }, state, 0);
    expect(one.rows).toBe("1 row");
    expect(one.files).toContain("0/1 bulk file | ");
  });
});
