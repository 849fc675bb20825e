import { describe, expect, it } from "vitest";
import { decodePage, encodeColumns, encodePage, RANGE_MIN_RECORDS } from "../../src/state/log-page.js";
import type { LogColumns, LogRecord } from "../../src/state/index.js";

type Fields = LogColumns["fields"];

/** The records a page of columns stands for. */
function recordsOf(page: LogColumns): LogRecord[] {
  const f = page.fields;
  const at = <T>(column: T | readonly T[], i: number): T => (Array.isArray(column) ? (column as readonly T[])[i] : column) as T;
  return Array.from({ length: page.count }, (_, i) => ({
    id: `${page.idPrefix}${page.idFrom + i}`, action: at(f.action, i), channel_id: at(f.channel_id, i), context: at(f.context, i),
    field_data: at(f.field_data, i), identifier: at(f.identifier, i), job_id: at(f.job_id, i), integration: at(f.integration, i),
    message: at(f.message, i), method: at(f.method, i), operation: at(f.operation, i), request_id: at(f.request_id, i), result: at(f.result, i),
    sd_user_id: at(f.sd_user_id, i), timestamp: at(f.timestamp, i), type: at(f.type, i), instance: at(f.instance, i),
    log_level: at(f.log_level, i), sd_acct_id: at(f.sd_acct_id, i),
  }));
}

function page(count: number, idPrefix: string, over: Partial<Fields> = {}): LogColumns {
  const n = (f: (i: number) => string): string[] => Array.from({ length: count }, (_, i) => f(i));
  return {
    count,
    idPrefix,
    idFrom: 41,
    fields: {
      action: n((i) => (i % 50 === 0 ? "skip" : "export")), channel_id: "", context: "", field_data: "", identifier: n((i) => `P${i % 300}`),
      job_id: "run-7", integration: "conveyor", message: n((i) => (i < 10 ? '{"other":1}' : '{"file":"a.csv"}')), method: "auto", operation: "export",
      request_id: n((i) => (i === 3 ? "q3" : "")), result: n((i) => (i % 50 === 0 ? "warning" : "success")), sd_user_id: "demo",
      timestamp: n((i) => `2026-11-27 23:0${Math.floor(i / 250)}:00`), type: "item", instance: 0, log_level: Array.from({ length: count }, (_, i) => (i % 50 === 0 ? 2 : 1)),
      sd_acct_id: 0, ...over,
    },
  };
}

describe("a page of log records given field by field", () => {
  it("is the very page its records make, and reads back as them", () => {
    const columns = page(1000, "run-7-");
    const records = recordsOf(columns);
    const encoded = encodeColumns(columns);
    expect(encoded).toEqual(encodePage(records, 0, records.length));
    expect(encoded.idPrefix).toBe("run-7-");
    expect(decodePage(encoded.body)).toEqual(records);
  });

  it("takes ids apart as a search does when the prefix ends in a digit, and keeps each id where that breaks the sequence", () => {
    for (const [idPrefix, idFrom, kept] of [["run7", 41, false], ["run7", 95, true]] as const) {
      const columns = { ...page(20, idPrefix, { identifier: "P1", timestamp: "2026-11-27 23:00:00" }), idFrom };
      const records = recordsOf(columns);
      const encoded = encodeColumns(columns);
      expect(encoded).toEqual(encodePage(records, 0, records.length));
      expect(encoded.idPrefix).toBe(kept ? null : "run");
      expect(encoded.keys.includes(`erun7${idFrom}`)).toBe(kept);
      expect(decodePage(encoded.body).map((r) => r.id)).toEqual(records.map((r) => r.id));
    }
  });
});

describe("a page's identifiers as a range", () => {
  const ids = (n: number, at: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => at(i));
  const keysOf = (identifiers: string[]) => encodeColumns(page(identifiers.length, "run-7-", { identifier: identifiers }));

  it("keeps identifiers that never go down as their first and last, and no key each", () => {
    const ordered = keysOf(ids(RANGE_MIN_RECORDS, (i) => `P${String(Math.floor(i / 2)).padStart(5, "0")}`));
    expect(ordered.identifiers).toEqual({ min: "iP00000", max: `iP${String((RANGE_MIN_RECORDS - 1) >> 1).padStart(5, "0")}` });
    expect(ordered.keys.filter((k) => k.startsWith("i"))).toEqual([]);
    // The request ids keep their keys.
    expect(ordered.keys).toContain("rq3");
  });

  it("keeps a key each for a page out of order, a short page, or one whose orders differ", () => {
    const cases = [
      ids(RANGE_MIN_RECORDS, (i) => `P${String(RANGE_MIN_RECORDS - i).padStart(5, "0")}`),
      ids(RANGE_MIN_RECORDS - 1, (i) => `P${String(i).padStart(5, "0")}`),
      ids(RANGE_MIN_RECORDS, (i) => (i === RANGE_MIN_RECORDS - 1 ? "P\uFFFD" : `P${String(i).padStart(5, "0")}`)),
    ];
    for (const identifiers of cases) {
      const encoded = keysOf(identifiers);
      expect(encoded.identifiers).toBeNull();
      expect(encoded.keys.filter((k) => k.startsWith("i")).sort()).toEqual([...new Set(identifiers)].map((i) => `i${i}`).sort());
    }
  });
});
