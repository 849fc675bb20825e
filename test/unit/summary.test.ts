import { describe, expect, it } from "vitest";
import { runSummary } from "../../src/cli-output/summary.js";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";

function record(over: Partial<RunRecord>): RunRecord {
  return {
    id: "r20261123T101500-abc123", automation: "stock", account: "demo", mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
    started: "2026-11-23T10:15:00.000Z", finished: "2026-11-23T10:15:24.000Z", outcome: "success", counts: { ...emptyCounts(), rows: 300, update: 300 },
    requests: { read: 2, write: 27 }, bytes: 0, files: [], debug_files: [], guard: null, error: null, heartbeat: null, ...over,
  };
}

describe("the run summary", () => {
  it("calls a finished run's counts changes", () => {
    const text = runSummary(record({}));
    expect(text).toMatch(/changes\s+│ 0 create, 300 update/);
    expect(text).not.toContain("part of the plan");
  });

  it("calls a live run stopped part way through apply's counts planned, and says where the results are", () => {
    const text = runSummary(record({ outcome: "canceled", error: { code: "canceled", message: "the run was canceled" } }));
    expect(text).toMatch(/planned\s+│ 0 create, 300 update/);
    expect(text).toContain("part of the plan may have been applied: the log records with job_id r20261123T101500-abc123 give each record's result");
  });

  it("says why a run had nothing to do", () => {
    const text = runSummary(record({ outcome: "nothing", counts: emptyCounts(), note: "file_configs[0]: no file to import: 1 listed, 1 already processed (stock.csv)" }));
    expect(text).toMatch(/why\s+│ file_configs\[0\]: no file to import: 1 listed, 1 already processed \(stock\.csv\)/);
  });

  it("quotes the records that failed by message, and a failed run's error once, not as a run cut short", () => {
    const failures = [{ message: "the title field is required to create an item", count: 2, examples: ["SKU-1", "SKU-2"] }];
    const partial = runSummary(record({ outcome: "partial", counts: { ...emptyCounts(), rows: 3, create: 3, failed: 2 }, failures }));
    expect(partial).toContain("2 records failed, by the service's message:\n  the title field is required to create an item (2: SKU-1, SKU-2)");
    expect(partial).toContain("errors.csv has each one: conveyor debug-files r20261123T101500-abc123 errors.csv");
    const error = { code: "records_failed", message: "2 records refused by the service: the title field is required to create an item (2: SKU-1, SKU-2)", hint: "Fix these records" };
    const failed = runSummary(record({ outcome: "failed", counts: { ...emptyCounts(), rows: 2, create: 2, failed: 2 }, failures, error }));
    expect(failed).toContain(`error (records_failed): ${error.message}\n  how to fix: Fix these records`);
    expect(failed).not.toContain("by the service's message");
    expect(failed).not.toContain("part of the plan may have been applied");
    expect(failed).toMatch(/changes\s+│ 2 create/);
  });
});
