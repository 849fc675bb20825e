import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SourceIndex } from "../../../src/pipeline/import/source-index.js";
import { WorkDb } from "../../../src/pipeline/import/workdb.js";

const open = (): WorkDb => new WorkDb(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-held-")), "work.db"));

/** A source index of a snapshot that holds `ids` (no fingerprints: membership is all these tests ask). */
async function indexOf(ids: readonly string[]): Promise<SourceIndex> {
  return SourceIndex.fromPages([ids.map((id) => [id, null] as const)], ids.length, () => false);
}

const bare = (ids: readonly string[]): Array<{ identifier: string; values: Record<string, string> }> => ids.map((id) => ({ identifier: id, values: { guid: id } }));

/** Whether the work database's own table holds `id`: a record held out is answered only while the marks are kept. */
function inTable(db: WorkDb, id: string): boolean {
  db.dropScopeMarks();
  return db.scopeLookup([id], false).has(id);
}

describe("a scope held beside the source index", () => {
  it("holds out what the source index knows, and answers for it from the index while the plan runs", async () => {
    const db = open();
    db.holdScope("guid");
    // Read before the index came: inserted, and read back into the marks.
    db.addScope(bare(["A1", "NEW1"]));
    const index = await indexOf(["A1", "A2", "A3", "GONE"]);
    db.markScopeIn(index);
    // A2 and A3 are the index's; NEW2 is not in the snapshot, so the table keeps it.
    db.addScope(bare(["A2", "A3", "NEW2"]));
    db.endScope();
    expect(db.scopeCount()).toBe(5);
    expect(db.scopeLookup(["A1", "A2", "NEW2", "GONE", "NOPE"], false)).toEqual(
      new Map([
        ["A1", { guid: "A1" }],
        ["NEW2", { guid: "NEW2" }],
        ["A2", { guid: "A2" }],
      ]),
    );
    expect([...db.scopeHas(["A3", "GONE", "NEW1", "A3", "NOPE"], false)]).toEqual([1, 0, 1, 1, 0]);
    expect([...db.scopeHasList(JSON.stringify(["A2", "NOPE"]), 2, true)]).toEqual([1, 0]);
    // Removals need the identifiers themselves, which the index does not keep: asking is a bug, and says so.
    expect(() => [...db.unmentioned()]).toThrow(/removal candidates.*held out/);
    expect(inTable(db, "NEW2")).toBe(true);
    // Past the plan the index is let go: a lookup that would need it is refused, not answered "not in scope".
    expect(() => db.scopeLookup(["A2"], false)).toThrow(expect.objectContaining({ code: "internal" }));
    expect(() => db.scopeHas(["A3"], false)).toThrow(/past the plan/);
    db.close();
  });

  it("holds records of the identifier and decimals, and gives their values back as the service gave them", async () => {
    const db = open();
    db.holdScope("guid");
    db.addScope([{ identifier: "T1", values: { stock: "3", guid: "T1", price: "9.90" } }]);
    db.markScopeIn(await indexOf(["T1", "A1", "A2", "A3", "A4", "A5", "A6"]));
    const records: Array<[string, Record<string, string>]> = [
      ["A1", { stock: "12", guid: "A1", price: "12.50" }],
      ["A2", { stock: "", guid: "A2", price: "-0.005" }],
      // Not decimals that code exactly: inserted.
      ["A3", { stock: "1e3", guid: "A3", price: "1" }],
      ["A4", { stock: "4", guid: "A4", price: "007" }],
      // Fields in another order: inserted.
      ["A5", { guid: "A5", stock: "5", price: "5" }],
      ["A6", { stock: "0", guid: "A6", price: "0.000" }],
    ];
    db.addScope(records.map(([identifier, values]) => ({ identifier, values })));
    db.endScope();
    expect(db.scopeCount()).toBe(7);
    const all = ["T1", ...records.map(([id]) => id)];
    const found = db.scopeLookup([...all, "NOPE"], false);
    for (const [id, values] of records) expect(JSON.stringify(found.get(id))).toBe(JSON.stringify(values));
    expect(found.get("T1")).toEqual({ stock: "3", guid: "T1", price: "9.90" });
    expect(found.has("NOPE")).toBe(false);
    expect([...db.scopeHas([...all, "NOPE"], false)]).toEqual([1, 1, 1, 1, 1, 1, 1, 0]);
    for (const id of ["A3", "A4", "A5"]) expect(inTable(db, id), id).toBe(true);
    // The others were held: past the plan, only the marks could have answered for them.
    for (const id of ["A1", "A2", "A6"]) expect(() => db.scopeLookup([id], false), id).toThrow(/past the plan/);
    db.close();
  });

  it("lets the last record of an identifier the scope gives twice win, and counts it once", async () => {
    const db = open();
    db.holdScope("guid");
    db.addScope([{ identifier: "D1", values: { guid: "D1", stock: "1" } }]);
    db.markScopeIn(await indexOf(["D1", "D2", "D3"]));
    const entry = (id: string, stock: string): { identifier: string; values: Record<string, string> } => ({ identifier: id, values: { guid: id, stock } });
    // D1 was inserted before the index and comes again; D2 is held, then comes with a value that must be inserted; D3 comes twice.
    db.addScope([entry("D1", "2"), entry("D2", "1"), entry("D3", "1")]);
    db.addScope([entry("D2", "n/a"), entry("D3", "2")]);
    db.endScope();
    expect(db.scopeCount()).toBe(3);
    expect(db.scopeLookup(["D1", "D2", "D3"], false)).toEqual(new Map([["D1", { guid: "D1", stock: "2" }], ["D2", { guid: "D2", stock: "n/a" }], ["D3", { guid: "D3", stock: "2" }]]));
    db.close();
  });

  it("forgets a held record once, however often its identifier comes again, and keeps answering for the others", async () => {
    const db = open();
    db.holdScope("guid");
    db.markScopeIn(await indexOf(["E1", "E2"]));
    const entry = (id: string, stock: string): { identifier: string; values: Record<string, string> } => ({ identifier: id, values: { guid: id, stock } });
    db.addScope([entry("E1", "1"), entry("E2", "1")]);
    db.addScope([entry("E1", "2"), entry("E1", "3")]);
    db.endScope();
    expect(db.scopeCount()).toBe(2);
    expect(db.scopeLookup(["E1", "E2"], false)).toEqual(new Map([["E1", { guid: "E1", stock: "3" }], ["E2", { guid: "E2", stock: "1" }]]));
    db.close();
  });

  it("inserts every record when the source index holds only part of the snapshot", async () => {
    const db = open();
    db.holdScope("guid");
    const ids = ["A1", "A2", "A3", "A4"];
    // Cut at two entries of four, as a snapshot past MAX_ENTRIES is.
    const index = await SourceIndex.fromPages([ids.map((id) => [id, null] as const)], ids.length, () => false, 2);
    expect(index.whole).toBe(false);
    db.markScopeIn(index);
    db.addScope(ids.map((id) => ({ identifier: id, values: { guid: id, stock: "1" } })));
    db.endScope();
    for (const id of ids) expect(inTable(db, id), id).toBe(true);
    db.close();
  });

  it("inserts every record when the run may remove", async () => {
    const db = open();
    db.markScopeIn(await indexOf(["A1", "A2"]));
    db.addScope(["A1", "A2"].map((id) => ({ identifier: id, values: { guid: id, stock: "1" } })));
    db.endScope();
    expect([...db.unmentioned()].flat()).toEqual(["A1", "A2"]);
    expect(inTable(db, "A2")).toBe(true);
    db.close();
  });

  it("inserts a record whose identifier is not its value, so that its values come back as the service gave them", async () => {
    const db = open();
    db.holdScope("guid");
    db.markScopeIn(await indexOf(["A1", "A2"]));
    db.addScope([
      { identifier: "A1", values: { guid: "A1 " } },
      { identifier: "A2", values: { guid: "A2" } },
    ]);
    db.endScope();
    expect(db.scopeLookup(["A1", "A2"], false)).toEqual(new Map([["A1", { guid: "A1 " }], ["A2", { guid: "A2" }]]));
    expect(inTable(db, "A1")).toBe(true);
    db.close();
  });
});
