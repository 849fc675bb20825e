import { describe, expect, it, beforeEach, afterEach } from "vitest";
import { LOG_PAGE_RECORDS } from "../../src/state/log-page.js";
import { LOG_FOUND_CAP, logFilter } from "../../src/state/log-query.js";
import type { LogPage, LogQuery, LogRecord, StateStore } from "../../src/state/index.js";

/** What a search must answer: every record written, newest first, filtered by the seed's rules, the page within the capped matches. */
export function expected(written: ReadonlyArray<{ account: string; record: LogRecord }>, query: LogQuery): LogPage {
  const matches = logFilter(query);
  const all = written.filter((w) => (!query.account || w.account === query.account) && matches(w.record)).map((w) => w.record).reverse();
  const counted = all.slice(0, LOG_FOUND_CAP + 1);
  const start = query.start ?? 0;
  return { found: Math.min(counted.length, LOG_FOUND_CAP), found_more_logs: counted.length > LOG_FOUND_CAP, logs: counted.slice(start, start + (query.records ?? 20)) };
}

export function record(id: string, i: number, over: Partial<LogRecord> = {}): LogRecord {
  return {
    id, action: i % 5 === 0 ? "skip" : "export", channel_id: "", context: "", field_data: "", identifier: `SKU${i % 7}`, job_id: "run-a",
    integration: "conveyor", message: `{"row":${i % 3}}`, method: "auto", operation: "export", request_id: i < 1500 ? "bulk-1" : "bulk-2",
    result: i % 5 === 0 ? "warning" : "success", sd_user_id: "demo", timestamp: `2026-11-21 10:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`,
    type: "item", instance: 0, log_level: i % 5 === 0 ? 2 : 1, sd_acct_id: 0, ...over,
  };
}

/**
 * Log records stored as pages: every search answers as a record-per-row
 * table did, across page boundaries, runs, accounts and id shapes.
 */
/**
 * Records in the table of one row each (written by an older Conveyor) are
 * found after the pages written now, as older ones, and retention prunes
 * both; the store is closed at the end.
 */
export async function oldRowsBeforePages(store: StateStore, old: readonly LogRecord[]): Promise<void> {
  const fresh = Array.from({ length: 300 }, (_, i) => record(`run-new-${i + 1}`, i, { job_id: "run-new" }));
  await store.addLogs("demo", fresh);
  let written = [...old, ...fresh].map((r) => ({ account: "demo", record: r }));
  for (const query of [{ account: "demo", start: 290, records: 20 }, { account: "demo", start: 995, records: 20 }, { account: "demo", identifier: ["SKU2"], start: 40, records: 10 }, { account: "demo", id: "7-old" }, { account: "demo", run: "run-old", start: 1190, records: 20 }]) {
    expect(await store.searchLogs(query)).toEqual(expected(written, query));
  }
  await store.pruneRuns(new Date("2026-06-01T00:00:00.000Z"));
  written = written.filter((w) => w.record.timestamp >= "2026-06-01");
  for (const query of [{ account: "demo", start: 880, records: 50 }, { account: "demo", id: "7-old" }, { account: "demo", id: "700-old" }]) {
    expect(await store.searchLogs(query)).toEqual(expected(written, query));
  }
  await store.close();
}

export function logPagesSuite(name: string, open: () => Promise<StateStore>): void {
  describe(`log pages: ${name}`, () => {
    let store: StateStore;
    let written: Array<{ account: string; record: LogRecord }>;
    const add = async (account: string, records: LogRecord[]): Promise<void> => {
      await store.addLogs(account, records);
      written.push(...records.map((r) => ({ account, record: r })));
    };
    const check = async (query: LogQuery): Promise<void> => {
      expect(await store.searchLogs(query), JSON.stringify(query)).toEqual(expected(written, query));
    };

    beforeEach(async () => {
      store = await open();
      written = [];
      // Ids counting up (as LogWriter makes them), two batches of one run, so pages continue the sequence across calls.
      const a = Array.from({ length: 2 * LOG_PAGE_RECORDS + 500 }, (_, i) => record(`run-a-${i + 1}`, i));
      await add("demo", a.slice(0, 1700));
      await add("demo", a.slice(1700));
      // Ids of no sequence, another run and a run changing inside one batch, another account with the same identifiers.
      await add("demo", Array.from({ length: 30 }, (_, i) => record(`x${(i * 7919) % 101}-0${i}`, i, { job_id: i < 12 ? "run-b" : "run-c", timestamp: "2026-11-22 08:00:00" })));
      await add("other", Array.from({ length: 40 }, (_, i) => record(`run-o-${i + 1}`, i, { job_id: "run-o" })));
    });
    afterEach(async () => {
      await store.close();
    });

    it("finds records by each search field across page boundaries, as the model does", async () => {
      const queries: LogQuery[] = [
        { account: "demo" },
        { account: "demo", records: 50, start: 990 },
        { account: "demo", id: "run-a-1000" },
        { account: "demo", id: "run-a-1001" },
        { account: "demo", id: "run-a-2500" },
        { account: "demo", id: "run-a-2501" },
        { account: "demo", id: "run-o-3" },
        { account: "other", id: "run-o-3" },
        { account: "demo", id: "x0-00" },
        { account: "demo", id: "x7-01" },
        { account: "demo", identifier: ["SKU3"], records: 50, start: 300 },
        { account: "demo", identifier: ["SKU3", "SKU4"], records: 50, start: 700 },
        { account: "other", identifier: ["SKU3"] },
        { account: "demo", request_id: "bulk-2", records: 50, start: 980 },
        { account: "demo", request_id: "bulk-1", job_id: "run-c" },
        { account: "demo", run: "run-a", start: 1000, records: 5 },
        { account: "demo", run: "run-b", records: 50 },
        { account: "demo", run: "run-c", job_id: "run-b" },
        { account: "demo", identifier: ["SKU1"], job_id: "run-b", records: 50 },
        { account: "demo", timestamp_start: "2026-11-21 10:16:39", timestamp_end: "2026-11-21 10:16:41" },
        { account: "demo", timestamp_start: "2026-11-21 10:00:00", timestamp_end: "2026-11-21 10:59:59", result: "warning", records: 50, start: 400 },
        { account: "demo", context: [""], action: "skip", start: 495, records: 10 },
        { account: "demo", instance: 0, type: "item", start: 1000, records: 3 },
        { account: "demo", result: "warning" },
        { account: "demo", identifier: ["nothing"] },
      ];
      for (const query of queries) await check(query);
    });

    it("pages through one search with start and records, the cap holding", async () => {
      for (const start of [0, 19, 20, 999, 1000, 1001, 1002]) await check({ account: "demo", start, records: 7 });
      const capped = await store.searchLogs({ account: "demo", start: 1000, records: 50 });
      expect(capped).toMatchObject({ found: LOG_FOUND_CAP, found_more_logs: true });
      // The page lies within the matches counted, one past the cap.
      expect(capped.logs).toHaveLength(2);
      // 358 of run-a, 5 of run-b and run-c.
      expect((await store.searchLogs({ account: "demo", identifier: ["SKU0"] })).found).toBe(363);
    });

    it("deletes by timestamp, the rest of a page keeping its place", async () => {
      // The cut falls inside the first page of run-a (records 0..999 are 10:00:00 to 10:16:39).
      await store.pruneRuns(new Date("2026-11-21T10:05:00.000Z"));
      written = written.filter((w) => !(w.record.timestamp < "2026-11-21 10:05:00"));
      for (const query of [{ account: "demo", start: 1000, records: 50 }, { account: "demo", identifier: ["SKU2"], records: 50, start: 300 }, { account: "demo", id: "run-a-300" }, { account: "demo", id: "run-a-301" }, { account: "demo", run: "run-a", start: 2180, records: 50 }]) {
        await check(query);
      }
      await store.pruneRuns(new Date("2026-11-23T00:00:00.000Z"));
      expect(await store.searchLogs({ account: "demo" })).toEqual({ found: 0, found_more_logs: false, logs: [] });
      expect((await store.searchLogs({ account: "demo", identifier: ["SKU1"] })).found).toBe(0);
    });

    it("finds a page of identifiers in order by its range, and a page out of order by its keys", async () => {
      // Two runs over the same catalogue in identifier order (an export's), pages of 1,000 holding ranges.
      const sku = (i: number): string => `P${String(i * 2).padStart(7, "0")}`;
      for (const run of ["run-e1", "run-e2"]) {
        await add("demo", Array.from({ length: 2500 }, (_, i) => record(`${run}-${i + 1}`, i, { job_id: run, identifier: sku(i) })));
      }
      // Out of order, and in order but for one character whose UTF-16 and UTF-8 orders differ: keys, not a range.
      await add("demo", Array.from({ length: 150 }, (_, i) => record(`run-u-${i + 1}`, i, { job_id: "run-u", identifier: sku(149 - i) })));
      const astral = Array.from({ length: 150 }, (_, i) => `Q${String(i).padStart(4, "0")}`);
      // In JavaScript's order (UTF-16) these two ascend; in the stores' (UTF-8 bytes) the emoji comes last.
      astral[148] = "Q\u{1F4E6}";
      astral[149] = "Q\uFFFD";
      await add("demo", astral.map((identifier, i) => record(`run-q-${i + 1}`, i, { job_id: "run-q", identifier })));
      for (const query of [
        { account: "demo", identifier: [sku(0)] },
        { account: "demo", identifier: [sku(999)] },
        { account: "demo", identifier: [sku(1000)] },
        { account: "demo", identifier: [sku(2499)] },
        { account: "demo", identifier: [sku(100), sku(1500), "SKU3"], records: 50 },
        // Inside a page's range, held by no record of it.
        { account: "demo", identifier: ["P0000001"] },
        { account: "demo", identifier: ["P00"] },
        { account: "demo", identifier: [sku(140)], job_id: "run-u" },
        { account: "demo", identifier: ["Q\u{1F4E6}"] },
        { account: "demo", identifier: ["Q\uFFFD"] },
        { account: "demo", identifier: ["Q0100"] },
        { account: "other", identifier: [sku(5)] },
      ]) {
        await check(query);
      }
      expect((await store.searchLogs({ account: "demo", identifier: [sku(1200)] })).found).toBe(2);
      await store.pruneRuns(new Date("2026-11-21T10:05:00.000Z"));
      written = written.filter((w) => !(w.record.timestamp < "2026-11-21 10:05:00"));
      for (const query of [{ account: "demo", identifier: [sku(299)] }, { account: "demo", identifier: [sku(300)] }, { account: "demo", identifier: [sku(1300)] }]) await check(query);
    });

    it("gives back a record that is not exactly a LogRecord as it was given", async () => {
      const extra = { ...record("odd-1", 1, { job_id: "run-odd" }), note: "kept" } as LogRecord;
      // The same fields in another order: identifier first.
      const { identifier, ...rest } = record("odd-2", 2, { job_id: "run-odd", identifier: "SKU9" });
      const reordered = { identifier, ...rest };
      // A field missing, and a value that is neither text nor a number.
      const { context: _context, ...missing } = record("odd-3", 3, { job_id: "run-odd" });
      const valued = { ...record("odd-4", 4, { job_id: "run-odd" }), message: null } as unknown as LogRecord;
      await add("demo", [extra, reordered, missing as LogRecord, valued]);
      const page = await store.searchLogs({ account: "demo", run: "run-odd" });
      expect(page.logs.map((l) => JSON.stringify(l))).toEqual([valued, missing, reordered, extra].map((l) => JSON.stringify(l)));
      await check({ account: "demo", identifier: ["SKU9"] });
    });
  });
}
