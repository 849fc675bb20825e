import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAutomation } from "../../src/pipeline/run.js";
import type { Automation } from "../../src/definition/index.js";
import type { RunRecord } from "../../src/state/index.js";
import { csv, openHarness, type Harness } from "../pipeline/harness.js";

/** A live import that updates prices, creates products and ends others; then its undo, debug first, then live. */
const HEADER = ["guid", "title", "price", "stock"];
const FIELD_MAP = { guid: "guid", title: "title", price: "price", stock: "stock" };
const BASE = Array.from({ length: 6 }, (_, i) => [`P${i}`, `Part ${i}`, `${10 + i}.00`, String(i)]);

function debugFile(h: Harness, runId: string, name: string): string {
  return readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");
}

/** The catalogue field by field, without what the service stamps itself. */
function catalogue(h: Harness, listedOnly = true): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [guid, item] of h.items()) {
    if (listedOnly && item.listed === "0") continue;
    const { dateupdated: _u, ...rest } = item;
    out[guid] = rest;
  }
  return out;
}

function undo(h: Harness, automation: Automation, of: string, options: { debug?: boolean; force?: boolean; identifiers?: string[]; fields?: string[] } = {}): Promise<RunRecord> {
  return runAutomation(h.worker.env, {
    key: automation.slug,
    automation,
    mode: options.debug ? "debug" : "prod",
    trigger: "manual",
    diff: false,
    force: options.force ?? false,
    notify: false,
    email: null,
    undo: { of, identifiers: options.identifiers ?? [], fields: options.fields ?? [] },
  });
}

describe("undo of a live product import", () => {
  let h: Harness;
  let automation: Automation;
  let run: RunRecord;
  let before: Record<string, Record<string, string>>;
  beforeEach(async () => {
    h = await openHarness();
    automation = h.automation({ field_map: FIELD_MAP, create: "start", update: "edit", remove: "end", remove_limit: "50%" });
    h.writeFeed("feed-1.csv", csv(HEADER, BASE));
    expect((await h.run(automation)).outcome).toBe("success");
    before = catalogue(h);
    // Prices of P0 and P1 change, P2 and P3 leave the feed (ended), N1 and N2 are new.
    const next = [
      ["P0", "Part 0", "99.00", "0"],
      ["P1", "Part 1", "98.00", "1"],
      ...BASE.slice(4),
      ["N1", "New 1", "5.00", "7"],
      ["N2", "New 2", "6.00", "8"],
    ];
    h.writeFeed("feed-1.csv", csv(HEADER, next), 7200);
    run = await h.run(automation);
    expect(run.outcome).toBe("success");
    expect(run.counts).toMatchObject({ update: 4, same: 2, create: 2, remove: 2 });
    expect(run.undo).toMatchObject({ journal: true, entries: 6 });
  });
  afterEach(async () => {
    await h.close();
  });

  it("plans each field going back in debug, then restores the catalogue live", async () => {
    const changed = catalogue(h);
    const debug = await undo(h, automation, run.id, { debug: true });
    expect(debug.outcome).toBe("success");
    expect(debug.undo_of).toBe(run.id);
    expect(catalogue(h)).toEqual(changed);
    const plan = debugFile(h, debug.id, "plan.csv");
    expect(plan).toContain("update,edit,P0,price,99.00,10.00");
    expect(plan).toContain("update,edit,P1,price,98.00,11.00");
    expect(plan).toMatch(/remove,end,N1/);
    expect(plan).toMatch(/update,relist,P2/);

    const live = await undo(h, automation, run.id);
    expect(live.outcome).toBe("success");
    expect(live.counts).toMatchObject({ update: 4, remove: 2, failed: 0 });
    expect(catalogue(h)).toEqual(before);
    expect(h.items().get("N1")?.listed).toBe("0");
  });

  it("leaves a field changed by hand alone as a conflict, and --force restores it", async () => {
    const context = h.worker.embedded?.context;
    if (!context) throw new Error("no embedded service");
    const row = context.db.prepare("SELECT fields FROM items WHERE guid = 'P0'").pluck().get() as string;
    context.db.prepare("UPDATE items SET fields = ? WHERE guid = 'P0'").run(JSON.stringify({ ...(JSON.parse(row) as Record<string, string>), price: "77.00" }));
    const live = await undo(h, automation, run.id);
    expect(live.conflicts).toBe(1);
    expect(debugFile(h, live.id, "conflicts.csv")).toContain("P0,price,10.00,99.00,77.00");
    expect(h.items().get("P0")?.price).toBe("77.00");
    expect(h.items().get("P1")?.price).toBe("11.00");
    const forced = await undo(h, automation, run.id, { force: true });
    expect(forced.conflicts).toBe(0);
    expect(catalogue(h)).toEqual(before);
  });

  it("an undo of the undo restores the run's values", async () => {
    const changed = catalogue(h);
    const first = await undo(h, automation, run.id);
    expect(catalogue(h)).toEqual(before);
    const again = await undo(h, automation, first.id);
    expect(again.outcome).toBe("success");
    expect(catalogue(h)).toEqual(changed);
  });

  it("stops at remove_limit like any run, and --force goes past it", async () => {
    const strict = h.automation({ field_map: FIELD_MAP, create: "start", update: "edit", remove: "end", remove_limit: 1 });
    const stopped = await undo(h, strict, run.id);
    expect(stopped.outcome).toBe("failed");
    expect(stopped.guard?.name).toBe("remove_limit");
    expect(h.items().get("P0")?.price).toBe("99.00");
    const forced = await undo(h, strict, run.id, { force: true });
    expect(forced.outcome).toBe("success");
    expect(catalogue(h)).toEqual(before);
  });

  it("narrows to identifiers and fields", async () => {
    const live = await undo(h, automation, run.id, { identifiers: ["P0", "N1"], fields: ["price"] });
    expect(live.outcome).toBe("success");
    expect(h.items().get("P0")?.price).toBe("10.00");
    expect(h.items().get("P1")?.price).toBe("98.00");
    expect(h.items().get("N1")?.listed).toBe("0");
    expect(h.items().get("N2")?.listed).toBe("1");
  });

  // The forced run also ends P2 and P3 again (ended by the run before, still in scope): the undo must not relist them.
  it("undoes a forced price shift without a change limit stopping the undo", async () => {
    const restored = catalogue(h);
    // Every price takes the stock column's value: the change limit stops it, --force applies it.
    const shifted = [...BASE.slice(0, 2).map(([g, t, , st]) => [g, t, `${Number(st) + 1}.00`, st]), ...BASE.slice(4).map(([g, t, , st]) => [g, t, `${Number(st) + 1}.00`, st]), ["N1", "New 1", "8.00", "7"], ["N2", "New 2", "9.00", "8"]] as string[][];
    h.writeFeed("feed-1.csv", csv(HEADER, shifted), 3600);
    const stopped = await h.run(automation);
    expect(stopped.outcome).toBe("failed");
    expect(stopped.guard?.name).toBe("change_limit");
    const forced = await h.run(automation, { force: true });
    expect(forced.outcome).toBe("success");
    expect(catalogue(h).P0?.price).toBe("1.00");
    const back = await undo(h, automation, forced.id);
    expect(back.guard).toBeNull();
    expect(back.outcome).toBe("success");
    expect(catalogue(h)).toEqual(restored);
  });
});
