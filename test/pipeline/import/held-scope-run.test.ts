import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HeldScope } from "../../../src/pipeline/import/held-scope.js";
import { ProductPlanner } from "../../../src/pipeline/import/product-planner.js";
import { WorkDb } from "../../../src/pipeline/import/workdb.js";
import { ServiceClient } from "../../../src/service/index.js";
import { csv, debugFiles, openHarness, type Harness } from "../harness.js";

/**
 * Issue 28: a diff run that removes nothing keeps out of the work database
 * the scope records its source index knows, when their values are the
 * identifier and the decimals change limits weigh (held-scope.ts). Its
 * outcome, plan and bulk files must be those of the same run with every
 * scope record inserted: changed rows updated, records deleted from the
 * service since the snapshot created again, new rows created, limits
 * weighed against the service's values.
 */
const HEADER = ["guid", "title", "stock", "price"];
const N = 300;
const base = (): string[][] => Array.from({ length: N }, (_, i) => [`B${String(i).padStart(4, "0")}`, `Item ${i}`, String(i % 7), `${10 + (i % 13)}.${i % 2 === 0 ? "50" : "05"}`]);
/** Every 25th stock and price changed, the first three rows gone from the feed, two new rows. */
const next = (): string[][] => [...base().slice(3).map((r, j) => (j % 25 === 0 ? [r[0] ?? "", r[1] ?? "", "42", "99.5"] : r)), ["NEW1", "New 1", "1", "1"], ["NEW2", "New 2", "2", "2"]];
const DELETED = ["B0010", "B0150", "B0299"];
/** Records whose stock was set in the service since the snapshot: one the next feed changes, two it does not, one to a text no code holds. */
const EDITED: Array<[string, string]> = [["B0028", "0"], ["B0029", "7"], ["B0030", "12.250"], ["B0031", "n/a"]];

describe("a diff run whose scope is held beside its source index", () => {
  let h: Harness;
  const exportRecordPages = ServiceClient.prototype.exportRecordPages;
  /** The scope export waits until the planner asks for the scope, so that the source index is in before it. */
  let gate: { held: Promise<void>; release: () => void } | null = null;
  let heldOut = 0;
  let holding = true;

  beforeEach(async () => {
    h = await openHarness({ CONVEYOR_DEBUG_ROWS: "50" });
    heldOut = 0;
    holding = true;
    ServiceClient.prototype.exportRecordPages = async function* (this: ServiceClient, ...args: Parameters<ServiceClient["exportRecordPages"]>) {
      if (gate) await gate.held;
      yield* exportRecordPages.apply(this, args);
    };
    const scopeIn = ProductPlanner.prototype.scopeIn;
    vi.spyOn(ProductPlanner.prototype, "scopeIn").mockImplementation(function (this: ProductPlanner) {
      gate?.release();
      return scopeIn.call(this);
    });
    const keep = HeldScope.prototype.keep;
    vi.spyOn(HeldScope.prototype, "keep").mockImplementation(function (this: HeldScope, ...args: Parameters<HeldScope["keep"]>) {
      const kept = keep.apply(this, args);
      heldOut += args[0].length - kept.length;
      return kept;
    });
    const hold = WorkDb.prototype.holdScope;
    vi.spyOn(WorkDb.prototype, "holdScope").mockImplementation(function (this: WorkDb, identifierField: string) {
      if (holding) hold.call(this, identifierField);
    });
  });

  afterEach(async () => {
    ServiceClient.prototype.exportRecordPages = exportRecordPages;
    gate = null;
    vi.restoreAllMocks();
    await h.close();
  });

  const gateScopeExport = (): void => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    gate = { held, release };
  };

  for (const [name, limits, scope] of [
    ["identifiers alone", { change_limits: false }, "guid"],
    ["the identifier, stock and price", {}, "guid, stock and price"],
  ] as const) {
    it(`plans what a run with the whole scope in the work database plans, debug and live: ${name}`, async () => {
      // Without change limits (on stock and price by default), the scope reads the identifiers alone.
      const automation = h.automation({ field_map: { guid: "guid", title: "title", stock: "stock", price: "price" }, create: "add", update: "edit", ...limits });
      h.writeFeed("feed.csv", csv(HEADER, base()));
      expect((await h.run(automation)).counts).toMatchObject({ create: N });
      const db = h.worker.embedded?.context.db;
      db?.prepare(`DELETE FROM items WHERE guid IN (${DELETED.map(() => "?").join(", ")})`).run(...DELETED);
      for (const [guid, stock] of EDITED) db?.prepare("UPDATE items SET fields = json_set(fields, '$.stock', ?) WHERE guid = ?").run(stock, guid);
      h.writeFeed("feed.csv", csv(HEADER, next()));

      holding = false;
      gateScopeExport();
      const whole = await h.run(automation, { mode: "debug", diff: true });
      expect(heldOut).toBe(0);
      holding = true;
      gateScopeExport();
      const held = await h.run(automation, { mode: "debug", diff: true });
      // Nearly every scope record was the index's: far more held out than kept.
      expect(heldOut, scope).toBeGreaterThan(N / 2);

      const changed = Math.ceil((N - 3) / 25);
      const counts = { create: 2 + DELETED.length, update: changed, remove: 0, unchanged: N - 3 - changed - DELETED.length };
      expect(whole.counts).toMatchObject(counts);
      expect(held.counts).toEqual(whole.counts);
      expect(debugFiles(h, held)).toEqual(debugFiles(h, whole));

      heldOut = 0;
      gateScopeExport();
      const live = await h.run(automation, { diff: true });
      expect(heldOut).toBeGreaterThan(N / 2);
      expect(live.counts).toMatchObject(counts);
      const items = h.items();
      for (const id of DELETED) expect(items.get(id)?.title).toBe(`Item ${Number(id.slice(1))}`);
      expect(items.get("B0003")?.stock).toBe("42");
      expect(items.get("B0028")?.stock).toBe("42");
      expect(items.get("B0030")?.stock).toBe("12.250");
      expect(items.get("NEW2")?.title).toBe("New 2");
      // The rows the feed dropped stay: the run removes nothing.
      expect(items.has("B0000")).toBe(true);
      gateScopeExport();
      const again = await h.run(automation, { diff: true });
      expect(again.counts).toMatchObject({ create: 0, update: 0, remove: 0, unchanged: N - 3 + 2 });
    });
  }
});
