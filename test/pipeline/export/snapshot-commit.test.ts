import { mkdtempSync } from "node:fs";
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
    expect(await snap.commit(failed, (id) => void seen.push(id))).toBe(ids.length - 2);
    expect(seen).toEqual(ids.filter((id) => !failed.has(id)));
    expect(await store.snapshotCount("k#export#0")).toBe(ids.length - 2);
    const got = await store.snapshotGet("k#export#0", [ids[0] as string, ids[3] as string, ids[5] as string, ids[7] as string, "gone"]);
    expect(Object.fromEntries(got)).toEqual({ [ids[0] as string]: { h: rowHash([ids[0] as string]) }, [ids[3] as string]: { h: rowHash([ids[3] as string]) }, [ids[5] as string]: { h: rowHash([ids[5] as string]) } });
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
