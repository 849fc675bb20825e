import { describe, expect, it } from "vitest";
import { pointerGreater, PointerTally } from "../../src/pipeline/import/pointer-tally.js";
import { pointerRulesOf, pointerViews } from "../../src/pointers/index.js";
import type { SourceRow } from "../../src/formats/index.js";
import type { BoundFieldMap } from "../../src/mapping/index.js";
import { orderExport, parsed, problemsOf, type Def } from "./helpers.js";

/** `connection.pointers`: the rules' shape, where they are refused, and how candidates compare. */

function httpImport(pointers: unknown): Def {
  return {
    name: "Changes",
    active: true,
    schedule: "0 * * * *",
    type: "orders",
    action: "import",
    connection: { type: "http", address: "https://api.example.test/shipments", payload: {}, pointers },
    file_configs: [{ jsonpath: 1, field_map: { oid: "$.order", "shipments.shiptracking": "$.tracking" }, update: true }],
  };
}

const paths = (def: Def): string[] => problemsOf(def).map((p) => `${p.path}: ${p.message}${p.allowed ? ` (${p.allowed})` : ""}`);

describe("connection.pointers", () => {
  it("accepts rules, defaults keep to max and keeps a numeric initial value as text", () => {
    const a = parsed(httpImport({ since: { from: "$.updated_at", initial: "2026-01-01T00:00:00Z" }, last_id: { from: "$.id", keep: "last", initial: 0 } }));
    expect(pointerRulesOf(a.connection)).toEqual({ since: { from: "$.updated_at", keep: "max", initial: "2026-01-01T00:00:00Z" }, last_id: { from: "$.id", keep: "last", initial: "0" } });
  });

  it("names the pointer's field in each refusal and says what is allowed", () => {
    expect(paths(httpImport({ since: { keep: "max" } }))).toEqual(["connection.pointers.since.from: required (string)"]);
    expect(paths(httpImport({ since: { from: "u", keep: "min" } }))).toEqual(['connection.pointers.since.keep: "min" is not allowed (max, last)']);
    expect(paths(httpImport({ since: { from: "u", start: "x" } }))).toEqual(['connection.pointers.since.start: unknown key "start" in a pointer (from, keep, initial)']);
    expect(paths(httpImport({ "2nd": { from: "u" } }))).toEqual(['connection.pointers["2nd"]: "2nd" is not a pointer name (letters, digits and _, not starting with a digit)']);
    expect(paths(httpImport({ since: { from: "" } }))).toEqual(["connection.pointers.since.from: must not be empty (at least 1 character)"]);
  });

  it("is refused on exports and on connections other than http", () => {
    const exported = { ...orderExport(), connection: { type: "http", address: "https://api.example.test/orders", pointers: { since: { from: "u" } } } };
    expect(paths(exported)).toContain('connection.pointers: "pointers" applies to imports only');
    const sftp = { ...httpImport({ since: { from: "u" } }), connection: { type: "sdsftp", path: "in", pointers: { since: { from: "u" } } } };
    expect(paths(sftp)[0]).toMatch(/^connection.pointers: "pointers" does not apply to a sdsftp connection/);
  });

  it("is refused beside a bulk_file pass, which sends its file unread", () => {
    const bulk = { ...httpImport({ since: { from: "u" } }), type: "products", file_configs: [{ bulk_file: 1 }] };
    expect(paths(bulk)).toContain("file_configs[0].bulk_file: a bulk file is sent as it is, unread, so connection.pointers would never move (bulk_file: 0 with field_map, or no pointers)");
  });

  it("shows each ruled pointer with its stored and initial value", () => {
    const rules = pointerRulesOf(parsed(httpImport({ since: { from: "$.u", initial: "2026-01-01" }, page: { from: "$.p" } })).connection);
    expect(pointerViews(rules, { since: "2026-02-01" })).toEqual({ since: { value: "2026-02-01", initial: "2026-01-01" }, page: { value: null, initial: null } });
  });
});

describe("pointer candidates", () => {
  it("compare numbers as numbers and anything else as text", () => {
    expect(pointerGreater("10", "9")).toBe(true);
    expect(pointerGreater("-1.5", "-2")).toBe(true);
    expect(pointerGreater("2026-01-10T00:00:00Z", "2026-01-09T23:59:59Z")).toBe(true);
    expect(pointerGreater("b", "a10")).toBe(true);
  });

  it("keep the largest or the last non-blank value offered", () => {
    const tally = new PointerTally({ top: { from: "v", keep: "max" }, last: { from: "v", keep: "last" } });
    const header: BoundFieldMap<SourceRow> = { fields: [], getters: [], columns: ["v"], column: (name) => (name === "v" ? (row) => String(row.raw) : null), value: (ref) => (ref === "v" ? (row) => String(row.raw) : null) };
    const observe = tally.bind(header, "feed.json");
    for (const v of ["9", "12", " ", "10"]) observe?.({ line: 1, raw: v });
    expect(tally.values()).toEqual({ top: "12", last: "10" });
  });

  it("fail on a column the file does not have, naming the pointer", () => {
    const tally = new PointerTally({ since: { from: "changed", keep: "max" } });
    const header: BoundFieldMap<SourceRow> = { fields: [], getters: [], columns: ["updated"], column: () => null, value: () => null };
    expect(() => tally.bind(header, "feed.csv")).toThrow(/connection\.pointers\.since\.from: feed\.csv has no column "changed"/);
  });
});
