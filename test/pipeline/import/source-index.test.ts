import { hash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SCOPE, SOURCE, SourceIndex, sourceMatch } from "../../../src/pipeline/import/source-index.js";
import { startSourceIndex } from "../../../src/pipeline/import/source-index-read.js";
import type { FileConfig } from "../../../src/definition/index.js";
import type { SnapshotEntry } from "../../../src/state/index.js";
import { SqliteStore } from "../../../src/state/sqlite.js";

/** A fingerprint of the shape sourceFingerprints makes: 12 characters of definition, 27 of row hash. */
const DEF = "DEFINITION01";
const OTHER = "DEFINITION02";
const fp = (definition: string, n: number): string => definition + hash("sha1", `row ${n}`, "base64url");

/** Two identifiers with one FNV-1a hash: the index cannot tell them apart and must ask the store. */
function collision(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `C${i}`;
    let h = 0x811c9dc5;
    for (let j = 0; j < id.length; j++) h = Math.imul(h ^ id.charCodeAt(j), 0x01000193);
    const earlier = seen.get(h >>> 0);
    if (earlier !== undefined) return [earlier, id];
    seen.set(h >>> 0, id);
  }
}

describe("source index", () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), "conveyor-source-index-")), "state.db"));
  });
  afterEach(async () => {
    await store.close();
  });

  it("answers as the store's fingerprints do, and leaves shared hashes and odd fingerprints to the store", async () => {
    const [a, b] = collision();
    const entries: SnapshotEntry[] = [
      ...Array.from({ length: 3000 }, (_, i) => ({ identifier: `G${i}`, values: {}, source: fp(i % 2 ? DEF : OTHER, i) })),
      { identifier: "NOSRC", values: {} },
      { identifier: "OLD", values: {}, source: "defA" },
      { identifier: a, values: {}, source: fp(DEF, 1) },
      { identifier: b, values: {}, source: fp(DEF, 2) },
    ];
    await store.snapshotPut("k", entries);
    const index = await SourceIndex.load(store, "k", () => false);
    for (const e of entries.slice(0, 3000)) {
      const n = Number(e.identifier.slice(1));
      for (const row of [fp(DEF, n), fp(DEF, n + 1), fp(OTHER, n)]) expect(index.match(e.identifier, row)).toBe(sourceMatch(e.source ?? undefined, row));
    }
    expect(index.match("G1", fp(DEF, 1))).toBe(SOURCE.equal);
    expect(index.match("G1", fp(DEF, 3))).toBe(SOURCE.current);
    expect(index.match("G0", fp(DEF, 0))).toBe(SOURCE.none);
    expect(index.match("NOSRC", fp(DEF, 0))).toBe(SOURCE.none);
    expect(index.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    expect(index.match("OLD", fp(DEF, 0))).toBe(SOURCE.unknown);
    expect(index.match(a, fp(DEF, 1))).toBe(SOURCE.unknown);
    expect(index.match(b, fp(DEF, 2))).toBe(SOURCE.unknown);
  });

  it("compares both parts of the row hash it keeps, under any of its definitions", async () => {
    // 200 definitions: an index of 128 or more sets a slot word's top bit.
    const defs = Array.from({ length: 200 }, (_, i) => `D${String(i).padStart(11, "0")}`);
    const entries: SnapshotEntry[] = defs.map((d, i) => ({ identifier: `G${i}`, values: {}, source: fp(d, i) }));
    await store.snapshotPut("k", entries);
    const index = await SourceIndex.load(store, "k", () => false);
    // The character's lowest bit: the slot keeps 53 of the 54 bits its characters hold (the top one marks a row seen).
    const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const swap = (text: string, at: number): string => text.slice(0, at) + (B64[B64.indexOf(text[at] ?? "A") ^ 1] ?? "") + text.slice(at + 1);
    defs.forEach((d, i) => {
      const row = fp(d, i);
      expect(index.match(`G${i}`, row)).toBe(SOURCE.equal);
      // One character of the first kept part (beside the definition's index), then of the second.
      expect(index.match(`G${i}`, swap(row, 12))).toBe(SOURCE.current);
      expect(index.match(`G${i}`, swap(row, 15))).toBe(SOURCE.current);
      expect(index.match(`G${i}`, swap(row, 16))).toBe(SOURCE.current);
      expect(index.match(`G${i}`, swap(row, 20))).toBe(SOURCE.current);
      const other = defs[(i + 1) % defs.length] ?? d;
      expect(index.match(`G${i}`, fp(other, i))).toBe(SOURCE.none);
    });
  });

  it("marks the scope's identifiers only on their own entries, and keeps each match's row hash with the marks set", async () => {
    const [a, b] = collision();
    const entries: SnapshotEntry[] = [...Array.from({ length: 500 }, (_, i) => ({ identifier: `G${i}`, values: {}, source: fp(DEF, i) })), { identifier: a, values: {}, source: fp(DEF, 900) }];
    await store.snapshotPut("k", entries);
    const index = await SourceIndex.load(store, "k", () => false);
    const slotOf = (id: string, n: number): number => {
      expect(index.match(id, fp(DEF, n))).toBe(SOURCE.equal);
      return index.lastSlot;
    };
    // Every other record is in scope; `b` shares `a`'s first hash but is another identifier, and marks nothing.
    for (let i = 0; i < 500; i += 2) index.markScope(`G${i}`);
    index.markScope(b);
    index.markScope("NOT-IN-SNAPSHOT");
    for (let i = 0; i < 500; i++) expect(index.inScopeAt(slotOf(`G${i}`, i), i % 4 === 0)).toBe(i % 2 === 0);
    expect(index.inScopeAt(slotOf(a, 900), true)).toBe(false);
    // Marked slots still answer by their row hashes.
    expect(index.match("G2", fp(DEF, 3))).toBe(SOURCE.current);
    expect(index.match("G2", fp(DEF, 2))).toBe(SOURCE.equal);
    for (let i = 0; i < 500; i++) expect(index.mentioned(`G${i}`)).toBe(i % 4 === 0);
    expect(index.mentioned(b)).toBe(false);
    // By identifier, as a waiting list asks: only the table's own entries answer.
    expect([index.scopeOf("G6", false), index.scopeOf("G7", false), index.scopeOf(b, false), index.scopeOf("NEW", false)]).toEqual([SCOPE.in, SCOPE.out, SCOPE.unknown, SCOPE.unknown]);
    expect(index.mentioned("G6")).toBe(false);
    expect(index.scopeOf("G6", true)).toBe(SCOPE.in);
    expect(index.mentioned("G6")).toBe(true);
    expect(index.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    expect(index.lastSlot).toBe(-1);
  });

  it("notes a row on the entry `match` found as the identifier's own, as it does by identifier", async () => {
    const [a, b] = collision();
    await store.snapshotPut("k", [
      { identifier: "G1", values: {}, source: fp(DEF, 1) },
      { identifier: a, values: {}, source: fp(DEF, 900) },
    ]);
    const index = await SourceIndex.load(store, "k", () => false);
    expect(index.match("G1", fp(DEF, 1))).toBe(SOURCE.equal);
    expect(index.lastOwn).toBe(index.lastSlot);
    expect(index.noteRowAt(index.lastOwn)).toBe(false);
    expect(index.noteRow("G1")).toBe(true);
    // `b` shares `a`'s first hash: its match lands on `a`'s entry, which is not its own, and notes nothing there.
    index.match(b, fp(DEF, 900));
    expect(index.lastSlot).toBeGreaterThanOrEqual(0);
    expect(index.lastOwn).toBe(-1);
    expect(index.noteRowAt(index.lastOwn)).toBeNull();
    expect(index.noteRow(a)).toBe(false);
    expect(index.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    expect(index.lastOwn).toBe(-1);
  });

  it("gives way to the store when its read is stopped", async () => {
    await store.snapshotPut("k", [{ identifier: "A", values: {}, source: fp(DEF, 1) }]);
    const index = await SourceIndex.load(store, "k", () => true);
    expect(index.match("A", fp(DEF, 1))).toBe(SOURCE.unknown);
    const empty = await SourceIndex.load(store, "none", () => false);
    expect(empty.match("A", fp(DEF, 1))).toBe(SOURCE.none);
  });

  it("holds at most its limit of entries and leaves the identifiers past it to the store", async () => {
    const entries: SnapshotEntry[] = Array.from({ length: 50 }, (_, i) => ({ identifier: `G${String(i).padStart(2, "0")}`, values: {}, source: fp(DEF, i) }));
    await store.snapshotPut("k", entries);
    const index = await SourceIndex.load(store, "k", () => false, 20);
    const answers = entries.map((e, i) => index.match(e.identifier, fp(DEF, i)));
    // Pages come in identifier order: the first twenty are in the table, the rest unknown to it.
    expect(answers.slice(0, 20)).toEqual(Array(20).fill(SOURCE.equal));
    expect(answers.slice(20)).toEqual(Array(30).fill(SOURCE.unknown));
    expect(index.match("NEW", fp(DEF, 0))).toBe(SOURCE.unknown);
    expect(index.match("G00", fp(DEF, 1))).toBe(SOURCE.current);
    const exact = await SourceIndex.load(store, "k", () => false, 50);
    expect(exact.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    expect(exact.match("G49", fp(DEF, 49))).toBe(SOURCE.equal);
  });

  it("tells a limit met at a page's end from one the snapshot passes", async () => {
    // Pages of a thousand entries: twenty thousand end a page.
    const entries: SnapshotEntry[] = Array.from({ length: 20_000 }, (_, i) => ({ identifier: `G${String(i).padStart(5, "0")}`, values: {}, source: fp(DEF, i) }));
    await store.snapshotPut("k", entries);
    const exact = await SourceIndex.load(store, "k", () => false, 20_000);
    entries.forEach((e, i) => expect(exact.match(e.identifier, fp(DEF, i))).toBe(SOURCE.equal));
    expect(exact.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    await store.snapshotPut("k", [{ identifier: "H", values: {}, source: fp(DEF, 1) }]);
    const over = await SourceIndex.load(store, "k", () => false, 20_000);
    expect(over.match("G19999", fp(DEF, 19_999))).toBe(SOURCE.equal);
    expect(over.match("H", fp(DEF, 1))).toBe(SOURCE.unknown);
    expect(over.match("NEW", fp(DEF, 0))).toBe(SOURCE.unknown);
  });

  it("fills its table from pages, and gives way to the store when they pass the count", async () => {
    const entries = Array.from({ length: 3000 }, (_, i) => [`G${String(i).padStart(4, "0")}`, i % 10 ? fp(DEF, i) : null] as const);
    const pages = [entries.slice(0, 1000), entries.slice(1000, 2000), entries.slice(2000)];
    const counted = await SourceIndex.fromPages(pages, 3000, () => false, 5000);
    for (const [i, [id]] of entries.entries()) {
      expect(counted.match(id, fp(DEF, i))).toBe(i % 10 ? SOURCE.equal : SOURCE.none);
      expect(counted.match(id, fp(DEF, i + 1))).toBe(i % 10 ? SOURCE.current : SOURCE.none);
    }
    expect((await SourceIndex.fromPages(pages, 2999, () => false, 5000)).match("G0001", fp(DEF, 1))).toBe(SOURCE.unknown);
    // A limit below the count: the table holds the limit's entries, the rest are the store's.
    const limited = await SourceIndex.fromPages(pages, 3000, () => false, 1500);
    expect(limited.match("G1499", fp(DEF, 1499))).toBe(SOURCE.equal);
    expect(limited.match("G1501", fp(DEF, 1501))).toBe(SOURCE.unknown);
  });

  it("is read on a thread of its own from the store's file, and by the store when the thread cannot read it", async () => {
    const entries: SnapshotEntry[] = Array.from({ length: 3000 }, (_, i) => ({ identifier: `G${i}`, values: {}, source: fp(DEF, i) }));
    await store.snapshotPut("k", [...entries, { identifier: "NOSRC", values: {} }]);
    const config = { update: "edit", service_actions: [], vendor_actions: [], field_map: { guid: "guid" }, identifier: "guid" } as unknown as FileConfig;
    const pages = vi.spyOn(store, "snapshotSourcePages");
    const check = (index: SourceIndex | null): void => {
      if (!index) throw new Error("no index");
      entries.forEach((e, i) => expect(index.match(e.identifier, fp(DEF, i))).toBe(SOURCE.equal));
      expect(index.match("G1", fp(DEF, 2))).toBe(SOURCE.current);
      expect(index.match("NOSRC", fp(DEF, 0))).toBe(SOURCE.none);
      expect(index.match("NEW", fp(DEF, 0))).toBe(SOURCE.none);
    };
    const threaded = startSourceIndex({ config, diff: true, store, snapshotKey: "k" });
    check(await threaded.index);
    await threaded.stop();
    expect(pages).not.toHaveBeenCalled();
    // A file the thread cannot open: the store reads the index on this thread.
    const elsewhere = Object.assign(Object.create(store) as SqliteStore, { localFile: path.join(tmpdir(), "conveyor-no-such-state.db") });
    const fallback = startSourceIndex({ config, diff: true, store: elsewhere, snapshotKey: "k" });
    check(await fallback.index);
    await fallback.stop();
    expect(pages).toHaveBeenCalledTimes(1);
  });

  it("is read only for a diff run whose rows can be settled", async () => {
    const config = { update: "edit", service_actions: [], vendor_actions: [], field_map: { guid: "guid" }, identifier: "guid" } as unknown as FileConfig;
    const read = (over: Partial<FileConfig>, diff = true): Promise<SourceIndex | null> => startSourceIndex({ config: { ...config, ...over }, diff, store, snapshotKey: "k" }).index;
    expect(await read({})).toBeInstanceOf(SourceIndex);
    expect(await read({}, false)).toBeNull();
    expect(await read({ update: undefined })).toBeNull();
    expect(await read({ diff_update: true })).toBeNull();
    expect(await read({ format: "json" })).toBeNull();
  });
});
