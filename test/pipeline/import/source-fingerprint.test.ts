import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Automation } from "../../../src/definition/index.js";
import { ledgerKey } from "../../../src/pipeline/import/fetch.js";
import { ProductPlanner } from "../../../src/pipeline/import/product-planner.js";
import { SETTLED } from "../../../src/pipeline/import/read.js";
import type { RunRecord } from "../../../src/state/index.js";
import { PgSchemas } from "../../helpers/postgres.js";
import { csv, openHarness, type Harness } from "../harness.js";

/**
 * Issue 28: a diff run recognises an unchanged row by its source fingerprint,
 * without mapping it. Two harnesses run the same feeds; in one the snapshot
 * keeps its fingerprints, in the other they are cleared before every diff
 * run, so that every row is mapped as before. Their outcomes must not differ.
 */
const HEADER = ["guid", "title", "stock", "note"];
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock" };
const N = 240;
type Row = string[];

const base = (): Row[] => Array.from({ length: N }, (_, i) => [`F${String(i).padStart(4, "0")}`, `Item, "${i}"`, String(i % 7), `n${i}`]);

/** Every 20th stock changed, every 30th note changed (a column the mapping does not read), rows 0-4 gone, five new rows. */
function nextFeed(): Row[] {
  const rows = base()
    .slice(5)
    .map((r, j) => {
      const i = j + 5;
      const stock = i % 20 === 0 ? "99" : (r[2] ?? "");
      const note = i % 30 === 0 ? "changed note" : (r[3] ?? "");
      return [r[0] ?? "", r[1] ?? "", stock, note];
    });
  for (let i = 0; i < 5; i++) rows.push([`NEW${i}`, `New ${i}`, "1", ""]);
  return rows;
}

const pgs = new PgSchemas();
afterAll(async () => {
  await pgs.end();
});

const STATES: Array<[string, () => Record<string, string>]> = [
  ["sqlite", () => ({})],
  ["postgres", () => ({ CONVEYOR_DATABASE_URL: pgs.url() })],
];

/** How many rows the planners settled unchanged without mapping them. */
function settledCounter(): { count: () => number; restore: () => void } {
  const original = ProductPlanner.prototype.settle;
  let settled = 0;
  const spy = vi.spyOn(ProductPlanner.prototype, "settle").mockImplementation(async function (this: ProductPlanner, ...args: Parameters<ProductPlanner["settle"]>) {
    const codes = await original.apply(this, args);
    settled += codes.filter((c) => c === SETTLED.unchanged).length;
    return codes;
  });
  return { count: () => settled, restore: () => spy.mockRestore() };
}

function debugFiles(h: Harness, run: RunRecord): Record<string, string> {
  const folder = path.join(h.dir, ".conveyor", "runs", run.id, "debug");
  const out: Record<string, string> = {};
  for (const name of readdirSync(folder).sort()) if (/^(plan|records|errors|bulk-\d+)\.(csv|json)$/.test(name)) out[name] = readFileSync(path.join(folder, name), "utf8");
  return out;
}

/** Puts every snapshot entry again without its fingerprint: the next diff run maps every row. */
async function clearFingerprints(h: Harness, automation: Automation, ids: readonly string[]): Promise<void> {
  const store = h.worker.env.store;
  const key = ledgerKey(automation.slug, 0);
  const entries = [...(await store.snapshotGet(key, ids))].map(([identifier, values]) => ({ identifier, values }));
  await store.snapshotPut(key, entries);
  expect((await store.snapshotSources(key, ids)).size).toBe(0);
}

describe.each(STATES)("source fingerprints with %s state", (_state, stateEnv) => {
  let fast: Harness;
  let slow: Harness;
  beforeEach(async () => {
    fast = await openHarness({ CONVEYOR_DEBUG_ROWS: "50", ...stateEnv() });
    slow = await openHarness({ CONVEYOR_DEBUG_ROWS: "50", ...stateEnv() });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await fast.close();
    await slow.close();
  });

  it("a diff run settles unchanged rows unmapped, with the counts, plan, debug files and snapshot of a run that maps them", async () => {
    const ids = [...base().map((r) => r[0] ?? ""), ...nextFeed().map((r) => r[0] ?? "")];
    const config = { field_map: FIELD_MAP, create: "add", update: "edit", remove: "delete" };
    const automations = { fast: fast.automation(config), slow: slow.automation(config) };
    for (const [h, a] of [[fast, automations.fast], [slow, automations.slow]] as const) {
      h.writeFeed("feed.csv", csv(HEADER, base()));
      expect((await h.run(a)).counts).toMatchObject({ create: N });
    }
    const key = ledgerKey(automations.fast.slug, 0);
    expect((await fast.worker.env.store.snapshotSources(key, ids)).size).toBe(N);

    for (const h of [fast, slow]) h.writeFeed("feed.csv", csv(HEADER, nextFeed()));
    const runs: { fast: RunRecord[]; slow: RunRecord[] } = { fast: [], slow: [] };
    for (const mode of ["debug", "prod"] as const) {
      const counter = settledCounter();
      runs.fast.push(await fast.run(automations.fast, { mode, diff: true }));
      const settled = counter.count();
      counter.restore();
      await clearFingerprints(slow, automations.slow, ids);
      const counter2 = settledCounter();
      runs.slow.push(await slow.run(automations.slow, { mode, diff: true }));
      expect(counter2.count()).toBe(0);
      counter2.restore();
      // Unchanged rows past records.csv's 50 are settled without mapping: all but the changed stocks and notes.
      expect(settled).toBeGreaterThan(150);
    }
    for (const [i, run] of runs.fast.entries()) {
      const other = runs.slow[i];
      if (!other) throw new Error("no run to compare with");
      expect(run.outcome).toBe("success");
      expect(run.counts).toEqual(other.counts);
      expect(run.counts).toMatchObject({ create: 5, update: 11, remove: 5, unchanged: N - 5 - 11 });
      expect(run.requests.write).toBe(other.requests.write);
    }
    const [debugFast, debugSlow] = [runs.fast[0], runs.slow[0]];
    if (!debugFast || !debugSlow) throw new Error("no debug run");
    const files = debugFiles(fast, debugFast);
    expect(Object.keys(files)).toEqual(expect.arrayContaining(["plan.csv", "records.csv", "bulk-1.csv"]));
    expect(files).toEqual(debugFiles(slow, debugSlow));

    // The service and the snapshot say the same after both live runs; the fast one kept its fingerprints.
    const items = (h: Harness): Array<[string, Record<string, string>]> =>
      [...h.items()].map(([id, { date: _d, dateupdated: _u, ...fields }]): [string, Record<string, string>] => [id, fields]).sort();
    expect(items(fast)).toEqual(items(slow));
    const snapshot = async (h: Harness): Promise<unknown[]> => [...(await h.worker.env.store.snapshotGet(key, ids))].sort();
    expect(await snapshot(fast)).toEqual(await snapshot(slow));
    const sources = await fast.worker.env.store.snapshotSources(key, ids);
    expect(sources.size).toBe(N);
    // The slow one, whose fingerprints were cleared, has them back from its live diff run (changed or not).
    expect((await slow.worker.env.store.snapshotSources(key, ids)).size).toBe(N);

    // The same file again: nothing is sent, and every row settles but the four whose note alone changed
    // (30, 90, 150, 210). Their mapped values did not change, so their entries were not rewritten: a column that changes every day
    // and that the mapping does not read must not make every live run rewrite the whole snapshot.
    const counter = settledCounter();
    const again = await fast.run(automations.fast, { diff: true });
    expect(again.counts).toMatchObject({ create: 0, update: 0, remove: 0, unchanged: N });
    expect(counter.count()).toBe(N - 4);
    expect(again.requests.write).toBe(1);
  });

  it("rows papaparse reads after an irregular record settle too, and a record that changes how it is read is stored again", async () => {
    // Row 100's note holds a bare quote: that record and the rest of the file are read by papaparse, by their cells.
    const feed = (rows: Row[], fixed: boolean): string => csv(HEADER, rows).replace("QUOTE-MARK", fixed ? '"5"" screen"' : '5" screen');
    const rows = base().map((r, i) => (i === 100 ? [r[0] ?? "", r[1] ?? "", r[2] ?? "", "QUOTE-MARK"] : r));
    const automation = fast.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    fast.writeFeed("feed.csv", feed(rows, false));
    expect((await fast.run(automation)).counts).toMatchObject({ create: N });
    const counter = settledCounter();
    expect((await fast.run(automation, { diff: true })).counts).toMatchObject({ update: 0, unchanged: N });
    expect(counter.count()).toBe(N);

    // A stock changed before the irregular record (read by its text) and one after it (read by its cells).
    const changed = rows.map((r, i) => (i === 10 || i === 200 ? [r[0] ?? "", r[1] ?? "", "77", r[3] ?? ""] : r));
    fast.writeFeed("feed.csv", feed(changed, false));
    const run = await fast.run(automation, { diff: true });
    expect(run.counts).toMatchObject({ update: 2, unchanged: N - 2 });
    expect(counter.count()).toBe(2 * N - 2);
    expect([fast.items().get("F0010")?.stock, fast.items().get("F0200")?.stock]).toEqual(["77", "77"]);

    // The quote now enclosed: the same cells, every record read by its text. The records past row 100 change how
    // they are hashed, so they are mapped (and found unchanged) once, and their fingerprints stored again.
    fast.writeFeed("feed.csv", feed(changed, true));
    const fixedRun = await fast.run(automation, { diff: true });
    expect(fixedRun.counts).toMatchObject({ update: 0, unchanged: N });
    expect(counter.count()).toBe(3 * N - 2 - (N - 100));
    const again = await fast.run(automation, { diff: true });
    expect(again.counts).toMatchObject({ update: 0, unchanged: N });
    expect(counter.count()).toBe(4 * N - 2 - (N - 100));
    counter.restore();
  });

  it("a changed definition never reuses a fingerprint", async () => {
    const automation = fast.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    fast.writeFeed("feed.csv", csv(HEADER, base()));
    await fast.run(automation);
    // The same rows, the stock now mapped through a value_map: every record changes, none may be settled by its old fingerprint.
    const changed = fast.automation({ field_map: FIELD_MAP, value_map: { stock: { "0": "100" } }, create: "add", update: "edit" });
    const counter = settledCounter();
    const run = await fast.run(changed, { diff: true, key: automation.slug });
    expect(counter.count()).toBe(0);
    const zeros = Math.ceil(N / 7);
    expect(run.counts).toMatchObject({ update: zeros, unchanged: N - zeros });
    expect(fast.items().get("F0007")?.stock).toBe("100");
    // That live run gave every entry the new definition's fingerprint: the next run settles every row.
    const next = await fast.run(changed, { diff: true, key: automation.slug });
    expect(next.counts).toMatchObject({ update: 0, unchanged: N });
    expect(counter.count()).toBe(N);
  });
});
