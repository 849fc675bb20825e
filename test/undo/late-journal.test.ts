import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Automation } from "../../src/definition/index.js";
import { runAutomation } from "../../src/pipeline/run.js";
import type { RunRecord } from "../../src/state/index.js";
import { decodeChunk, type JournalEntry } from "../../src/undo/journal-entry.js";
import { lookupSearches } from "../../src/undo/late-journal.js";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";

/**
 * A live diff run with the undo journal reads its scope as narrowly as the run
 * without it, and reads every mapped field only of the records its plan
 * changes, after the plan: the journal holds the values the service held
 * (not the snapshot's), and an undo restores them.
 */
const HEADER = ["guid", "title", "price", "stock", "color"];
const FIELD_MAP = { guid: "guid", title: "title", price: "price", stock: "stock", color: "color" };
const SIZE = 30;
const BASE = Array.from({ length: SIZE }, (_, i) => [`G${i}`, `Title ${i}`, `${10 + i}.00`, String(20 + i), "red"]);

function catalogue(h: Harness): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [guid, item] of h.items()) {
    const { dateupdated: _u, ...rest } = item;
    out[guid] = rest;
  }
  return out;
}

describe("the undo journal of a live diff run", () => {
  let h: Harness;
  let automation: Automation;
  let run: RunRecord;
  let before: Record<string, Record<string, string>>;
  let exports: Array<{ search: string; fields: string; rows: number }>;

  beforeAll(async () => {
    h = await openHarness();
    automation = h.automation({ field_map: FIELD_MAP, create: "start", update: "edit", remove: "end", remove_limit: "50%" });
    h.writeFeed("feed-1.csv", csv(HEADER, BASE), 7200);
    expect((await h.run(automation)).outcome).toBe("success");
    const context = h.worker.embedded?.context;
    if (!context) throw new Error("no embedded service");
    // Changed by hand since: the journal must keep these, not what the snapshot says was sent.
    const edit = (guid: string, fields: Record<string, string>): void => {
      const row = context.db.prepare("SELECT fields FROM items WHERE guid = ?").pluck().get(guid) as string;
      context.db.prepare("UPDATE items SET fields = ? WHERE guid = ?").run(JSON.stringify({ ...(JSON.parse(row) as Record<string, string>), ...fields }), guid);
    };
    edit("G1", { title: "By hand 1" });
    edit("G3", { color: "blue" });
    edit("G5", { color: "green" });
    before = catalogue(h);
    const next = BASE.filter(([guid]) => guid !== "G4").map((r) => [...r]);
    const set = (guid: string, column: number, value: string): void => {
      const row = next.find((r) => r[0] === guid);
      if (row) row[column] = value;
    };
    set("G1", 1, "New title 1");
    set("G2", 2, "99.00");
    // G3: the feed now says what the service holds already; G5: the title changes, the hand-made color stays.
    set("G3", 4, "blue");
    set("G5", 1, "New title 5");
    set("G5", 4, "green");
    next.push(["N1", "New 1", "5.00", "7", "black"]);
    h.writeFeed("feed-1.csv", csv(HEADER, next), 3600);
    const first = (context.db.prepare("SELECT max(rowid) FROM exports").pluck().get() as number | null) ?? 0;
    run = await h.run(automation, { diff: true });
    exports = context.db.prepare("SELECT search, fields, rows FROM exports WHERE rowid > ? ORDER BY rowid").all(first) as typeof exports;
  });
  afterAll(async () => h.close());

  it("reads the scope narrowly, and every mapped field only of what the plan changes", () => {
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ update: 4, create: 1, remove: 1, same: 1, same_fields: 2 });
    const [scope, ...late] = exports;
    expect(scope).toMatchObject({ search: "", rows: SIZE });
    expect(scope?.fields.split(",")).not.toContain("title");
    // G1 and G3 (a title, a color) and G5 are updates of fields the scope did not read, G4 is ended; G2's price was read.
    expect(late).toHaveLength(1);
    expect(late[0]?.rows).toBe(4);
    expect(late[0]?.fields.split(",")).toEqual(expect.arrayContaining(["title", "color", "listed"]));
  });

  it("keeps the values the service held before, and the undo restores them", async () => {
    const chunks = await h.worker.env.store.getUndoChunks(run.id);
    const entries = chunks.flatMap((body, i) => decodeChunk(body, `chunk ${i}`));
    const byId = new Map<string, JournalEntry>(entries.map((e) => [e.i, e]));
    expect(byId.get("G1")).toEqual({ c: 0, i: "G1", a: "edit", f: [["title", "By hand 1", "New title 1"]] });
    expect(byId.get("G2")).toEqual({ c: 0, i: "G2", a: "edit", f: [["price", "12.00", "99.00"]] });
    // The color G3's feed now gives is the service's already: nothing to take back.
    expect(byId.has("G3")).toBe(false);
    expect(byId.get("G5")).toEqual({ c: 0, i: "G5", a: "edit", f: [["title", "Title 5", "New title 5"]] });
    expect(byId.get("G4")).toMatchObject({ a: "end", r: { guid: "G4", title: "Title 4", price: "14.00", stock: "24", color: "red", listed: "1" } });
    expect(byId.get("N1")).toEqual({ c: 0, i: "N1", a: "start" });
    expect(entries.map((e) => e.i)).toEqual(["G1", "G2", "G5", "N1", "G4"]);

    const undone = await runAutomation(h.worker.env, {
      key: automation.slug,
      automation,
      mode: "prod",
      trigger: "manual",
      diff: false,
      force: false,
      notify: false,
      email: null,
      undo: { of: run.id, identifiers: [], fields: [] },
    });
    expect(undone.outcome).toBe("success");
    const now = catalogue(h);
    expect(now.N1?.listed).toBe("0");
    delete now.N1;
    expect(now).toEqual(before);
  });

  it("reads the whole scope once most of it changed, and holds the entries of a feed planned twice only once", async () => {
    const context = h.worker.embedded?.context;
    if (!context) throw new Error("no embedded service");
    const held = catalogue(h);
    // Every title changes, and the feed repeats G0 (its last row wins): the feed is planned a second time.
    const rows = Object.values(held).filter((item) => item.listed !== "0" && item.guid !== "N1").map((item) => [item.guid ?? "", `Retitled ${item.guid ?? ""}`, item.price ?? "", item.stock ?? "", item.color ?? ""]);
    rows.push(["G0", "Retitled G0 again", held.G0?.price ?? "", held.G0?.stock ?? "", held.G0?.color ?? ""]);
    h.writeFeed("feed-1.csv", csv(HEADER, rows), 1800);
    const first = (context.db.prepare("SELECT max(rowid) FROM exports").pluck().get() as number | null) ?? 0;
    const retitled = await h.run(automation, { diff: true });
    expect(retitled.outcome).toBe("success");
    const reads = context.db.prepare("SELECT search, rows FROM exports WHERE rowid > ? ORDER BY rowid").all(first) as Array<{ search: string; rows: number }>;
    expect(reads.map((r) => r.search)).toEqual(["", ""]);
    const entries = (await h.worker.env.store.getUndoChunks(retitled.id)).flatMap((body, i) => decodeChunk(body, `chunk ${i}`));
    const edits = entries.filter((e) => e.a === "edit");
    expect(edits).toHaveLength(rows.length - 1);
    expect(edits.find((e) => e.i === "G0")).toEqual({ c: 0, i: "G0", a: "edit", f: [["title", held.G0?.title ?? "", "Retitled G0 again"]] });
    for (const e of edits) expect(e.f?.[0]?.[1]).toBe(held[e.i]?.title);
    // N1, ended by the undo, is in the scope and not in the feed: ended again, with the record as the service holds it.
    expect(entries.filter((e) => e.a !== "edit")).toEqual([{ c: 0, i: "N1", a: "end", r: { guid: "N1", title: "New 1", price: "5.00", stock: "7", color: "black", listed: "0" } }]);
  });

  it("cuts a long list of identifiers into searches a service takes", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => `ID "${i}" x`);
    const searches = lookupSearches("guid", ids);
    expect(searches.length).toBeGreaterThan(1);
    for (const s of searches) expect(encodeURIComponent(s).length).toBeLessThan(64 * 1024);
    expect(searches.join(" ").match(/guid:=/g)).toHaveLength(5000);
  });
});
