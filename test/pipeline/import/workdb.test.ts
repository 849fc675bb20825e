import { mkdtempSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { WorkDb } from "../../../src/pipeline/import/workdb.js";
import { SNAPSHOT_PUT_ENTRIES } from "../../../src/state/snapshot-entry.js";
import { CreatedFields, planProduct, planRemoval } from "../../../src/pipeline/import/plan.js";
import { PlannedCreate } from "../../../src/pipeline/planned-op.js";

const open = (): WorkDb => new WorkDb(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-work-")), "work.db"));

describe("work database", () => {
  it("writes no rollback journal: its scratch data is not worth one", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-work-"));
    const db = new WorkDb(path.join(dir, "work.db"));
    const touched: string[] = [];
    const watcher = watch(dir, (_event, name) => touched.push(String(name)));
    db.addScope(Array.from({ length: 500 }, (_, i) => ({ identifier: `I${i}`, values: { guid: `I${i}` } })));
    db.addWaiting('["I1"]', 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    watcher.close();
    db.close();
    expect(touched.some((name) => name.endsWith("-journal"))).toBe(false);
    expect(touched).toContain("work.db");
  });

  it("keeps the last row of an identifier, counts merges, and pages in file order", () => {
    const db = open();
    db.addIncoming("A", 2, { guid: "A", stock: "1" }, new Set());
    db.addIncoming("B", 3, { guid: "B", stock: "2" }, new Set(["cost"]));
    db.addIncoming("A", 4, { guid: "A", stock: "9" }, new Set());
    db.addScope([{ identifier: "B", values: { guid: "B", stock: "1" } }, { identifier: "C", values: { guid: "C", stock: "0" } }]);
    expect(db.mergedRows).toBe(1);
    expect(db.incomingCount()).toBe(2);
    const rows = [...db.incomingPages(1)].flat();
    expect(rows.map((r) => [r.identifier, r.line, r.values.stock, [...r.ignored]])).toEqual([
      ["B", 3, "2", ["cost"]],
      ["A", 4, "9", []],
    ]);
    const scope = db.scopeLookup(["A", "B"], true);
    expect([...scope].map(([id, v]) => [id, v.stock])).toEqual([["B", "1"]]);
    expect([...db.unmentioned()].flat()).toEqual(["C"]);
    db.close();
  });

  it("marks what scopeHas, scopeLookup and markMentioned name, and pages the rest in identifier order", () => {
    const db = open();
    const ids = Array.from({ length: 2500 }, (_, i) => `I${String(i).padStart(5, "0")}`);
    // Two reads, the second repeating part of the first: a record read again is one record, unmarked until named.
    db.addScope(ids.slice(0, 1500).map((identifier) => ({ identifier, values: { guid: identifier } })));
    db.addScope(ids.slice(1000).reverse().map((identifier) => ({ identifier, values: { guid: identifier, stock: "2" } })));
    db.endScope();
    expect(db.scopeCount()).toBe(2500);
    expect(db.scopeLookup(["I01200"], false).get("I01200")).toEqual({ guid: "I01200", stock: "2" });
    // Without mark nothing is noted.
    expect([...db.scopeHas(["I00000", "nope"], false)]).toEqual([1, 0]);
    const even = ids.filter((_, i) => i % 2 === 0);
    expect(db.scopeHas([...even, "nope"], true).reduce((n, f) => n + f, 0)).toBe(1250);
    expect(db.scopeLookup(["I00001", "I02499", "nope"], true).size).toBe(2);
    db.markMentioned("I00003");
    db.markMentioned("nope");
    const pages = [...db.unmentioned(500)];
    expect(pages.map((p) => p.length)).toEqual([500, 500, 247]);
    expect(pages.flat()).toEqual(ids.filter((id, i) => i % 2 === 1 && !["I00001", "I02499", "I00003"].includes(id)));
    db.close();
  });
});

describe("commits", () => {
  it("gives the values back as the JSON text they were added as, in order, past the write buffer, and forgets them on a new plan", () => {
    const db = open();
    const id = (i: number): string => `I${String(i).padStart(5, "0")}`;
    const entries = Array.from({ length: 25_123 }, (_, i) => ({ identifier: id(i), values: { guid: id(i), title: `"Ölkanne" ${i} \\` }, ...(i % 3 === 0 ? { source: `src${i}` } : {}) }));
    for (let i = 0; i < entries.length; i += 1000) db.addCommits(entries.slice(i, i + 1000));
    const pages = [...db.committable()];
    const full = Math.floor(entries.length / SNAPSHOT_PUT_ENTRIES);
    expect(pages.map((p) => p.length)).toEqual([...Array<number>(full).fill(SNAPSHOT_PUT_ENTRIES), entries.length - full * SNAPSHOT_PUT_ENTRIES]);
    expect(pages.flat()).toEqual(entries.map((e) => ({ identifier: e.identifier, valuesText: JSON.stringify(e.values), source: e.source ?? null })));
    db.addCommits(entries.slice(0, 7));
    db.resetPlan();
    expect([...db.committable()]).toEqual([]);
    db.addCommits(entries.slice(0, 2));
    expect([...db.committable()].flat().map((e) => e.identifier)).toEqual(["I00000", "I00001"]);
  });

  it("gives entries added in no order back in identifier order, the entries of one identifier as they were added", () => {
    const db = open();
    const ids = Array.from({ length: 5000 }, (_, i) => `U${String((i * 7919) % 5000).padStart(4, "0")}`);
    for (let i = 0; i < ids.length; i += 700) db.addCommits(ids.slice(i, i + 700).map((identifier) => ({ identifier, values: { stock: "1" } })));
    db.addCommits([{ identifier: "U0042", values: { stock: "later" } }]);
    const got = [...db.committable()].flat();
    expect(got.map((e) => e.identifier)).toEqual([...ids, "U0042"].sort());
    expect(got.filter((e) => e.identifier === "U0042").map((e) => e.valuesText)).toEqual(['{"stock":"1"}', '{"stock":"later"}']);
    // A plan made again is sorted afresh, from its own entries alone.
    db.resetPlan();
    db.addCommits([{ identifier: "B", values: {} }, { identifier: "A", values: {} }, { identifier: "C", values: {} }]);
    expect([...db.committable()].flat().map((e) => e.identifier)).toEqual(["A", "B", "C"]);
    db.close();
  });
});

describe("scopeHas", () => {
  it("flags the positions in scope, repeats included; with mark, only those found leave the removal candidates", () => {
    const db = open();
    db.addScope([
      { identifier: "B", values: { guid: "B" } },
      { identifier: "C", values: { guid: "C" } },
      { identifier: "D", values: { guid: "D" } },
    ]);
    expect([...db.scopeHas(["A", "B", "X", "B", "C"], false)]).toEqual([0, 1, 0, 1, 1]);
    expect([...db.scopeHas([], true)]).toEqual([]);
    expect([...db.unmentioned()].flat()).toEqual(["B", "C", "D"]);
    expect([...db.scopeHas(["C", "A", "B"], true)]).toEqual([1, 0, 1]);
    expect([...db.unmentioned()].flat()).toEqual(["D"]);
    db.close();
  });
});

describe("a scope in no order", () => {
  it("holds the rows past the first one out of order apart until the scope ends, the last row of an identifier winning", () => {
    const db = open();
    const ids = Array.from({ length: 3000 }, (_, i) => `S${String((i * 7919) % 3000).padStart(4, "0")}`);
    for (let i = 0; i < ids.length; i += 700) db.addScope(ids.slice(i, i + 700).map((id) => ({ identifier: id, values: { guid: id, stock: "1" } })));
    db.addScope([{ identifier: "S0042", values: { guid: "S0042", stock: "later" } }]);
    // Marks read back every row inserted so far, those that wait too.
    const marked: string[] = [];
    db.markScopeIn({
      entries: 0,
      whole: true,
      markScope: (id) => {
        marked.push(id);
        return false;
      },
      claimScope: () => -1,
      scopeEntry: () => -1,
      mentioned: () => false,
    });
    expect(marked.sort()).toEqual([...ids, "S0042"].sort());
    db.endScope();
    expect(db.scopeCount()).toBe(3000);
    expect(db.scopeLookup(["S0042", "S2999", "S0000", "NOPE"], true)).toEqual(new Map([["S0042", { guid: "S0042", stock: "later" }], ["S2999", { guid: "S2999", stock: "1" }], ["S0000", { guid: "S0000", stock: "1" }]]));
    const left = [...db.unmentioned()].flat();
    expect(left).toEqual([...ids].sort().filter((id) => !["S0042", "S2999", "S0000"].includes(id)));
    db.close();
  });
});

describe("scope marks", () => {
  /** A ScopeMarks that records what it is told; `said` are the identifiers it answers as mentioned. */
  const recorder = (said: Set<string>) => ({
    entries: 0,
    whole: true,
    marked: [] as string[],
    markScope(id: string) {
      this.marked.push(id);
      return false;
    },
    claimScope: () => -1,
    scopeEntry: () => -1,
    mentioned: (id: string) => said.has(id),
  });

  it("reads back the scope already in, in pages, then marks each page as it comes; removal asks the marks too", () => {
    const db = open();
    const early = Array.from({ length: 9000 }, (_, i) => `E${String(i).padStart(5, "0")}`);
    db.addScope(early.map((id) => ({ identifier: id, values: { guid: id } })));
    const marks = recorder(new Set(["E00007", "L2"]));
    expect(db.scopeMarkedIn(marks)).toBe(false);
    db.markScopeIn(marks);
    expect(db.scopeMarkedIn(marks)).toBe(true);
    expect(marks.marked).toEqual(early);
    db.addScope([{ identifier: "L1", values: { guid: "L1" } }, { identifier: "L2", values: { guid: "L2" } }]);
    expect(marks.marked.slice(9000)).toEqual(["L1", "L2"]);
    db.scopeHas(["E00001"], true);
    const left = [...db.unmentioned()].flat();
    expect(left).toHaveLength(9002 - 3);
    expect(left).not.toContain("E00001");
    expect(left).not.toContain("E00007");
    expect(left).not.toContain("L2");
    // Once dropped, the marks are neither told nor asked.
    db.dropScopeMarks();
    expect(db.scopeMarkedIn(marks)).toBe(false);
    db.addScope([{ identifier: "L3", values: { guid: "L3" } }]);
    expect(marks.marked).toHaveLength(9002);
    expect([...db.unmentioned()].flat()).toContain("L2");
    db.close();
    // A pass that ended before the index came: nothing is read from the closed database.
    const late = recorder(new Set());
    db.markScopeIn(late);
    expect(late.marked).toEqual([]);
    expect(db.scopeMarkedIn(late)).toBe(false);
  });
});

describe("planProduct", () => {
  const config = { identifier: "guid", create: "add" as const, update: "edit" as const, remove: "end" as const };
  const input = { identifier: "A", line: 2, values: { guid: "A", stock: "5", cost: "1.00" }, ignored: new Set<string>(), service: undefined, snapshot: undefined };

  it("creates what is not in scope with every mapped field but the identifier", () => {
    const op = planProduct(config, input);
    expect(op).toMatchObject({ kind: "create", action: "add", identifier: "A", line: 2 });
    expect(op.changes.map((c) => c.field)).toEqual(["stock", "cost"]);
  });

  it("gives creates that set the same fields one list, and builds their changes only when asked", () => {
    const createdFields = new CreatedFields();
    const a = planProduct(config, { ...input, createdFields });
    const b = planProduct(config, { ...input, identifier: "B", values: { guid: "B", stock: "7", cost: "2.00" }, createdFields });
    const c = planProduct(config, { ...input, identifier: "C", values: { guid: "C", cost: "3.00", stock: "1" }, createdFields });
    const d = planProduct(config, { ...input, identifier: "D", values: { guid: "D", stock: "2", cost: "4.00" }, ignored: new Set(["cost"]), createdFields });
    expect([a, b, c, d].every((op) => op instanceof PlannedCreate)).toBe(true);
    if (!(a instanceof PlannedCreate && b instanceof PlannedCreate && c instanceof PlannedCreate && d instanceof PlannedCreate)) return;
    expect(b.fields).toBe(a.fields);
    expect(c.fields).toEqual(["cost", "stock"]);
    expect(d.fields).toEqual(["stock"]);
    expect(b.changes).toEqual([
      { field: "stock", before: null, after: "7" },
      { field: "cost", before: null, after: "2.00" },
    ]);
    expect(b.changes).toBe(b.changes);
  });

  it("updates what is in scope; an update with nothing left is unchanged", () => {
    const service = { guid: "A", stock: "4", cost: "1.00" };
    expect(planProduct(config, { ...input, service }).changes.map((c) => c.field)).toEqual(["stock", "cost"]);
    expect(planProduct({ ...config, liveDiff: { fields: null, tolerance: 0 } }, { ...input, service }).changes).toEqual([
      { field: "stock", before: "4", after: "5", same: false },
    ]);
    expect(planProduct(config, { ...input, service, snapshot: { stock: "5", cost: "1.00" } }).kind).toBe("unchanged");
  });

  it("leaves ignored fields out, and skips with a reason when the action is not configured", () => {
    expect(planProduct(config, { ...input, ignored: new Set(["cost"]) }).changes.map((c) => c.field)).toEqual(["stock"]);
    expect(planProduct({ identifier: "guid", update: "edit" }, input)).toMatchObject({ kind: "skipped", reason: expect.stringContaining("no create") });
    expect(planRemoval({ identifier: "guid" }, "Z")).toBeNull();
    expect(planRemoval(config, "Z")).toMatchObject({ kind: "remove", action: "end", identifier: "Z" });
  });

  it("keeps the apply's failed records and their messages on disk, counted once each, past its write buffer", () => {
    const db = open();
    const failed = db.failures();
    expect(failed.size).toBe(0);
    expect(failed.has("A")).toBe(false);
    for (let i = 0; i < 5000; i++) failed.set(`F${i}`, "refused");
    failed.set("F1", "refused again");
    expect(failed.size).toBe(5000);
    expect(failed.has("F4999")).toBe(true);
    expect(failed.has("F5000")).toBe(false);
    // In the order they failed, paged past 1000, a record failed twice with its first message.
    const entries = [...failed.entries()];
    expect(entries).toHaveLength(5000);
    expect(entries.slice(0, 2)).toEqual([["F0", "refused"], ["F1", "refused"]]);
    expect(entries[4999]).toEqual(["F4999", "refused"]);
    db.close();
  });
});
