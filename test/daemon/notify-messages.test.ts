import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { failedAlert, repeatedAlert, silenceAlert, summaryMessage } from "../../src/daemon/notify-messages.js";
import { runFolder } from "../../src/pipeline/run.js";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";

/** The texts of the notification mails: what failed and why, with counts that read right for one. */
const TITLE = "the title field is required to create an item";
const failures = [{ message: TITLE, count: 2, examples: ["SKU-1", "SKU-2"] }];
const error = { code: "records_failed", message: `2 records refused by the service: ${TITLE} (2: SKU-1, SKU-2)`, hint: "Fix these records in the source file and run again." };

function record(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: "r20261125T101500-abc123", automation: "7", account: "demo", mode: "prod", trigger: "schedule", diff: false, force: false, notify: true, email: "ops@shop.test",
    started: "2026-11-25T10:15:00.000Z", finished: "2026-11-25T10:15:02.000Z", outcome: "failed", counts: { ...emptyCounts(), rows: 2, create: 2, failed: 2 },
    requests: { read: 1, write: 1 }, bytes: 27, files: [{ name: "feed.csv", size: 1, sha256: "", modified: null }], debug_files: ["errors.csv", "summary.json"],
    guard: null, error, failures, heartbeat: null, ...over,
  };
}

describe("notification texts", () => {
  it("the summary quotes the refused records by message, the first lines of errors.csv, and attaches it", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-notify-text-"));
    const run = record();
    const debug = path.join(runFolder(dataDir, run.id), "debug");
    mkdirSync(debug, { recursive: true });
    writeFileSync(path.join(debug, "errors.csv"), `line,identifier,message\n,SKU-1,"cannot add guid ""SKU-1"": ${TITLE}"\n,SKU-2,"cannot add guid ""SKU-2"": ${TITLE}"\n`);
    const mail = await summaryMessage(run, "Stock feed", "ops@shop.test", dataDir);
    expect(mail.subject).toBe("[conveyor] Stock feed: failed");
    expect(mail.text).toContain(`Error (records_failed): ${error.message}\nHow to fix: ${error.hint}`);
    // The error quotes the one reason: it is not listed a second time.
    expect(mail.text).not.toContain("by the service's message");
    expect(mail.text).toContain(`First lines of errors.csv (line, identifier, message):\n  ,SKU-1,"cannot add guid ""SKU-1"": ${TITLE}"`);
    expect(mail.text).toContain("Requests: 1 read, 1 write");
    expect(mail.text).toContain("Files: feed.csv (1 byte)");
    expect(mail.attachments?.map((a) => a.filename)).toEqual(["errors.csv"]);
  });

  it("the failure alert says why and which records, and the repeated and silence alerts count right", () => {
    const alert = failedAlert(record(), "Stock feed", "alerts@shop.test");
    expect(alert.text).toContain(`Error (records_failed): ${error.message}`);
    const two = failedAlert(record({ failures: [...failures, { message: "another reason", count: 1, examples: ["B"] }] }), "Stock feed", "alerts@shop.test");
    expect(two.text).toContain(`3 records failed, by the service's message:\n  ${TITLE} (2: SKU-1, SKU-2)\n  another reason (1: B)`);
    expect(repeatedAlert(record(), "Stock feed", "a@shop.test", 2).subject).toBe("[conveyor] ALERT: Stock feed failed 2 times in a row");
    expect(silenceAlert("7", "Stock feed", "a@shop.test", "2026-11-24T10:00:00.000Z", 1).subject).toBe("[conveyor] ALERT: no new file for Stock feed for 1 hour");
    expect(silenceAlert("7", "Stock feed", "a@shop.test", "2026-11-24T10:00:00.000Z", 36).subject).toBe("[conveyor] ALERT: no new file for Stock feed for 36 hours");
  });

  it("a partial run's summary, with no error, still says which records failed and why", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-notify-text-"));
    const mail = await summaryMessage(record({ outcome: "partial", error: null, failures: [{ message: TITLE, count: 1, examples: ["SKU-9"] }] }), "Stock feed", "ops@shop.test", dataDir);
    expect(mail.text).toContain(`1 record failed, by the service's message:\n  ${TITLE} (1: SKU-9)`);
    expect(mail.text).not.toContain("Error (");
  });

  it("an undo says so in the subject and the text, with its conflicts", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "conveyor-notify-text-"));
    const undo = record({ outcome: "success", error: null, failures: [], undo_of: "r20261124T020000-def456", conflicts: 1 });
    const mail = await summaryMessage(undo, "Stock feed", "ops@shop.test", dataDir);
    expect(mail.subject).toBe("[conveyor] Stock feed: undo of r20261124T020000-def456 success");
    expect(mail.text).toContain("Undo of run r20261124T020000-def456: 1 field left alone as a conflict (conflicts.csv among the debug files)");
    expect(failedAlert({ ...undo, outcome: "failed" }, "Stock feed", "a@shop.test").text).toMatch(/^The schedule undo \(of run r20261124T020000-def456\) r20261125T101500-abc123 of Stock feed/);
  });
});
