import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ExportSnapshot, rowHash, stageLine, stagedIdentifier } from "../../../src/pipeline/export/diff.js";
import { SqliteStore } from "../../../src/state/sqlite.js";

/**
 * The commit reads the staged file back in large reads and takes each
 * identifier from its JSON text without parsing it when it can: lines cut
 * between reads, characters of several bytes and text JSON escapes are what
 * can go wrong.
 */
const awkward = ['quote "q"', "back\\slash", "tab\there", "new\nline", "Café Ölkanne", "emoji 🚲", "lone \ud800 surrogate", "", " spaced "];

/** SQLite's order of text: its UTF-8 bytes (JavaScript's `<` compares UTF-16 code units). */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe("export snapshot commit", () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-commit-"));
    store = new SqliteStore(path.join(dir, "state.db"));
  });
  afterEach(async () => {
    await store.close();
  });

  const snapshot = (diff: boolean, name: string): ExportSnapshot =>
    new ExportSnapshot({ store, key: "k#export#0", diff, deliveredOnce: false, stagePath: path.join(dir, `${name}.jsonl`) });

  it("takes every identifier from its staged line as JSON.parse would", () => {
    for (const id of [...awkward, "plain", 'ends with \\"']) {
      const line = stageLine("aGFzaA==", id).slice(0, -1);
      expect(stagedIdentifier(line, line.indexOf(" ") + 1)).toBe(id);
    }
  });

  it("commits rows staged over several reads of the file, leaving out failed ones, and a full run prunes the rest", async () => {
    await store.snapshotPut("k#export#0", [{ identifier: "gone", values: { h: "old" } }]);
    // Long identifiers of several bytes a character: the file spans several reads, and lines are cut between them.
    const ids = Array.from({ length: 12_000 }, (_, i) => `${awkward[i % awkward.length]}·${"é".repeat(i % 50)}#${i}`);
    const snap = snapshot(false, "full");
    for (let i = 0; i < ids.length; i += 1000) await snap.stageMany(ids.slice(i, i + 1000).map((id) => ({ key: id, group: id, hash: rowHash([id]) })));
    const failed = new Set([ids[7] as string, ids[11_999] as string]);
    const seen: string[] = [];
    expect(await snap.commit(failed, (identifiers) => void seen.push(...identifiers))).toBe(ids.length - 2);
    // Out of identifier order from the second row: the rest goes to the store sorted.
    const kept = ids.filter((id) => !failed.has(id));
    // SQLite keeps a lone surrogate as U+FFFD, as the store does.
    expect(seen).toEqual([kept[0], ...kept.slice(1).map((id) => Buffer.from(id).toString()).sort(byBytes)]);
    expect(await store.snapshotCount("k#export#0")).toBe(ids.length - 2);
    const got = await store.snapshotGet("k#export#0", [ids[0] as string, ids[3] as string, ids[5] as string, ids[7] as string, "gone"]);
    expect(Object.fromEntries(got)).toEqual({ [ids[0] as string]: { h: rowHash([ids[0] as string]) }, [ids[3] as string]: { h: rowHash([ids[3] as string]) }, [ids[5] as string]: { h: rowHash([ids[5] as string]) } });
  });

  it("puts rows in identifier order from the first row out of it, the last row of an identifier winning, and removes its sort file", async () => {
    const order = Array.from({ length: 5000 }, (_, i) => `P${String((i * 7919) % 5000).padStart(4, "0")}`);
    // An ascending start, then no order, then a second row of an identifier seen before.
    const staged = ["A0", "A1", ...order, "P0042"];
    const snap = snapshot(false, "unordered");
    await snap.stageMany(staged.map((id, i) => ({ key: id, group: id, hash: i === staged.length - 1 ? "later" : `h-${id}` })));
    const puts: string[] = [];
    const realPut = store.snapshotPut.bind(store);
    store.snapshotPut = async (key, entries) => {
      puts.push(...entries.map((e) => e.identifier));
      return realPut(key, entries);
    };
    expect(await snap.commit(new Set())).toBe(staged.length);
    // P0000 and P2919 ascend; P0838 is the first out of order.
    expect(order.slice(0, 3)).toEqual(["P0000", "P2919", "P0838"]);
    expect(puts).toEqual(["A0", "A1", "P0000", "P2919", ...[...order.slice(2), "P0042"].sort()]);
    expect(await store.snapshotCount("k#export#0")).toBe(5002);
    expect(Object.fromEntries(await store.snapshotGet("k#export#0", ["P0042", "P0043", "A1"]))).toEqual({ P0042: { h: "later" }, P0043: { h: "h-P0043" }, A1: { h: "h-A1" } });
    expect(readdirSync(dir).filter((f) => f.includes("sort"))).toEqual([]);
  });

  it("a discarded (failed or debug) run leaves the snapshot as it was; a diff run keeps what it did not see", async () => {
    await store.snapshotPut("k#export#0", [{ identifier: "A", values: { h: "a" } }, { identifier: "B", values: { h: "b" } }]);
    const failedRun = snapshot(false, "failed");
    await failedRun.stageMany([{ key: "C", group: "C", hash: "c" }]);
    await failedRun.discard();
    expect(await store.snapshotCount("k#export#0")).toBe(2);
    const diffRun = snapshot(true, "diff");
    expect(await diffRun.classify([{ key: "A", group: "A", hash: "a" }, { key: "B", group: "B", hash: "x" }, { key: "C", group: "C", hash: "c" }])).toEqual(["unchanged", "update", "create"]);
    await diffRun.stageMany([{ key: "B", group: "B", hash: "x" }, { key: "C", group: "C", hash: "c" }]);
    expect(await diffRun.commit(new Set())).toBe(2);
    expect(Object.fromEntries(await store.snapshotGet("k#export#0", ["A", "B", "C"]))).toEqual({ A: { h: "a" }, B: { h: "x" }, C: { h: "c" } });
  });
});
