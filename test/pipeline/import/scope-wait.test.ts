import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ScopeWait, waitingList } from "../../../src/pipeline/import/scope-wait.js";
import { WorkDb } from "../../../src/pipeline/import/workdb.js";

/**
 * The identifiers a diff run settles before its scope is in wait in the work
 * database, gathered into lists of some thousands: one insert a settled batch
 * cost a 3M-row nightly run seconds. What comes back is every identifier, in
 * order, exactly as settled, whatever characters it holds.
 */
describe("ScopeWait's waiting lists", () => {
  let dir: string;
  let work: WorkDb;
  const limit = waitingList.identifiers;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "scope-wait-"));
    work = new WorkDb(path.join(dir, "work.db"));
    waitingList.identifiers = 12;
  });

  afterEach(() => {
    waitingList.identifiers = limit;
    work.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const batch = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => `SKU-${from + i}`);

  it("gathers settled batches into lists of the limit or more, and writes the rest when taken", () => {
    const written = vi.spyOn(work, "addWaiting");
    const wait = new ScopeWait<never>(new Promise<number>(() => undefined), work);
    wait.settle(batch(0, 5));
    wait.settle(batch(5, 5));
    expect(written).not.toHaveBeenCalled();
    expect(wait.holding).toBe(true);
    wait.settle(batch(10, 5));
    expect(written.mock.calls.map(([, count]) => count)).toEqual([15]);
    wait.settle(batch(15, 2));
    wait.settle([]);

    const { lists } = wait.take();
    const taken = [...lists];
    expect(taken.map((l) => l.count)).toEqual([15, 2]);
    expect(taken.flatMap((l) => JSON.parse(l.list) as string[])).toEqual(batch(0, 17));
    expect(wait.holding).toBe(false);
    // Taken lists are gone: a second take finds none.
    expect([...wait.take().lists]).toEqual([]);
  });

  it("keeps identifiers whole whatever they hold", () => {
    const odd = ['a"b', "c,d", "e\\f", "g\u2028h", "ü", "[x]", "", " sp "];
    const wait = new ScopeWait<never>(new Promise<number>(() => undefined), work);
    for (const id of odd) wait.settle([id]);
    const taken = [...wait.take().lists];
    expect(taken.flatMap((l) => JSON.parse(l.list) as string[])).toEqual(odd);
    expect(taken.reduce((sum, l) => sum + l.count, 0)).toBe(odd.length);
  });
});
