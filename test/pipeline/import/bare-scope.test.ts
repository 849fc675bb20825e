import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SourceIndex } from "../../../src/pipeline/import/source-index.js";
import { WorkDb } from "../../../src/pipeline/import/workdb.js";

const open = (): WorkDb => new WorkDb(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-bare-")), "work.db"));

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

describe("a scope of identifiers alone", () => {
  it("holds out what the source index knows, and answers for it from the index while the plan runs", async () => {
    const db = open();
    db.holdBareScope("guid");
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

  it("inserts every record of a scope with more than the identifier, or when the run may remove", async () => {
    for (const [allow, values] of [
      [true, (id: string) => ({ guid: id, stock: "1" })],
      [false, (id: string) => ({ guid: id })],
    ] as const) {
      const db = open();
      if (allow) db.holdBareScope("guid");
      db.markScopeIn(await indexOf(["A1", "A2"]));
      db.addScope(["A1", "A2"].map((id) => ({ identifier: id, values: values(id) })));
      db.endScope();
      expect([...db.unmentioned()].flat()).toEqual(["A1", "A2"]);
      expect(inTable(db, "A2")).toBe(true);
      db.close();
    }
  });

  it("inserts a record whose identifier is not its value, so that its values come back as the service gave them", async () => {
    const db = open();
    db.holdBareScope("guid");
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
