import { describe, expect, it } from "vitest";
import { LogWriter } from "../../src/pipeline/logs.js";
import { decodePage, encodePages } from "../../src/state/log-page.js";
import type { LogBatch, LogRecord, StateStore } from "../../src/state/index.js";

/** A store that keeps what the writer gives it, call by call, as the records its pages hold. */
function recordingStore(): { store: StateStore; calls: LogRecord[][] } {
  const calls: LogRecord[][] = [];
  const store = { addLogs: async (_account: string, logs: LogBatch) => void calls.push(encodePages(logs).flatMap((page) => decodePage(page.body))) } as unknown as StateStore;
  return { store, calls };
}

/** A successful export record of a.csv, written in the second it was added. */
function expectExported(record: LogRecord | undefined, own: Pick<LogRecord, "id" | "identifier" | "job_id" | "request_id">): void {
  const { timestamp, ...rest } = record as LogRecord;
  expect(timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  expect(rest).toEqual({
    id: own.id, action: "export", channel_id: "", context: "", field_data: "", identifier: own.identifier, job_id: own.job_id, integration: "conveyor",
    message: '{"file":"a.csv"}', method: "auto", operation: "export", request_id: own.request_id, result: "success", sd_user_id: "demo", type: "item",
    instance: 0, log_level: 1, sd_acct_id: 0,
  });
}

describe("LogWriter", () => {
  it("numbers records in order across batches and writes them a store page at a time", async () => {
    const { store, calls } = recordingStore();
    const writer = new LogWriter(store, { runId: "r1", account: "demo", integration: "conveyor", operation: "export", type: "item" });
    const message = { file: "a.csv" };
    const n = 12_345;
    for (let i = 0; i < n; i++) {
      const result = i % 97 === 0 ? "error" : i % 89 === 0 ? "warning" : "success";
      writer.add({ action: i % 2 ? "export" : "skip", identifier: `P${i}`, result, message: i === 7 ? { other: i } : message, ...(i === 9 ? { requestId: "q9" } : {}) });
    }
    await writer.flush();
    expect(writer.written).toBe(n);
    expect(calls.every((c) => c.length <= 1000)).toBe(true);
    const records = calls.flat();
    expect(records.map((r) => r.id)).toEqual(Array.from({ length: n }, (_, i) => `r1-${i + 1}`));
    expect(records.map((r) => r.identifier)).toEqual(Array.from({ length: n }, (_, i) => `P${i}`));
    expectExported(records[9], { id: "r1-10", identifier: "P9", job_id: "r1", request_id: "q9" });
    expect([records[0]?.log_level, records[89]?.log_level, records[1]?.log_level]).toEqual([3, 2, 1]);
    expect([records[0]?.result, records[89]?.result, records[0]?.action]).toEqual(["error", "warning", "skip"]);
    expect([records[7]?.message, records[8]?.message]).toEqual(['{"other":7}', '{"file":"a.csv"}']);
    // Written once: a second flush writes nothing more.
    await writer.flush();
    expect(calls.flat().length).toBe(n);
  });

  it("writes records that share all but their identifier after those added before, numbered in the order they were added", async () => {
    const { store, calls } = recordingStore();
    const writer = new LogWriter(store, { runId: "r3", account: "demo", integration: "conveyor", operation: "export", type: "item" });
    writer.add({ action: "skip", identifier: "bad-1", result: "error", message: { line: 4 } });
    const shared = Array.from({ length: 2500 }, (_, i) => `P${String(i).padStart(5, "0")}`);
    const written = writer.addShared(shared, { action: "export", result: "success", message: { file: "a.csv" } });
    // Added after the shared records, numbered after them.
    writer.add({ action: "skip", identifier: "bad-2", result: "warning", message: { line: 9 } });
    await written;
    expect(writer.written).toBe(2501);
    await writer.flush();
    expect(calls.every((c) => c.length <= 1000)).toBe(true);
    const records = calls.flat();
    expect(records.map((r) => r.id)).toEqual(Array.from({ length: 2502 }, (_, i) => `r3-${i + 1}`));
    expect(records.map((r) => r.identifier)).toEqual(["bad-1", ...shared, "bad-2"]);
    expectExported(records[1200], { id: "r3-1201", identifier: "P01199", job_id: "r3", request_id: "" });
    expect([records[0]?.log_level, records[2501]?.log_level, records[2501]?.message]).toEqual([3, 2, '{"line":9}']);
  });

  it("hands its caller the writes under way past 20,000 waiting records: a caller that waits keeps the backlog there", async () => {
    // Each write takes a turn of the event loop, as the SQLite store's do: a loop that never waits would outrun it.
    const store = { addLogs: async () => new Promise<void>((resolve) => setImmediate(resolve)) } as unknown as StateStore;
    const writer = new LogWriter(store, { runId: "r2", account: "demo", integration: "conveyor", operation: "export", type: "item" });
    const message = { file: "a.csv" };
    let most = 0;
    let waits = 0;
    for (let i = 0; i < 60_000; i++) {
      const wait = writer.add({ action: "export", identifier: `P${i}`, result: "success", message });
      most = Math.max(most, i + 1 - writer.written);
      if (wait) {
        waits++;
        await wait;
      }
    }
    await writer.flush();
    expect(writer.written).toBe(60_000);
    expect(waits).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(20_001);
  });
});
