import { describe, expect, it } from "vitest";
import type { ChangeLimits } from "../../../src/definition/index.js";
import type { FieldChange, PlannedOp } from "../../../src/pipeline/planned-op.js";
import { ChangeTally, checkChangeLimits } from "../../../src/pipeline/import/change-guard.js";

/** The tally and the check on their own: what counts as zeroed or moved, and when a limit trips. */
const LIMITS: ChangeLimits = {
  stock: { zeroed: { kind: "share", value: 0.5 } },
  price: { zeroed: { kind: "share", value: 0.05 }, moved: { percent: 30, share: { kind: "share", value: 0.1 } } },
};

const update = (identifier: string, ...changes: FieldChange[]): PlannedOp => ({ kind: "update", action: "edit", identifier, line: 2, changes });
const change = (field: string, before: string | null, after: string, same = false): FieldChange => ({ field, before, after, same });

function tally(ops: PlannedOp[], fields = ["stock", "price"]): ChangeTally {
  const t = new ChangeTally(LIMITS, fields);
  for (const op of ops) t.note(op);
  return t;
}

describe("ChangeTally", () => {
  it("counts a value going to zero or empty, not one that was zero or empty already, nor a same or unknown one", () => {
    const t = tally([
      update("A", change("stock", "4", "0")),
      update("B", change("stock", "4", " ")),
      update("C", change("stock", "2", "0.00")),
      update("D", change("stock", "0", "")),
      update("E", change("stock", "", "0")),
      update("F", change("stock", "0", "0", true)),
      update("G", change("stock", null, "0")),
      update("H", change("stock", "n/a", "0")),
    ]);
    expect(t.counts()).toEqual([{ field: "stock", check: "zeroed", count: 4, examples: [
      { identifier: "A", before: "4", after: "0" },
      { identifier: "B", before: "4", after: " " },
      { identifier: "C", before: "2", after: "0.00" },
      { identifier: "H", before: "n/a", after: "0" },
    ] }]);
  });

  it("counts a move past the percentage either way, of numbers only, and keeps five examples", () => {
    const ops = [
      update("up", change("price", "100", "131")),
      update("down", change("price", "100", "69.99")),
      update("edge", change("price", "100", "130")),
      update("text", change("price", "call us", "10")),
      update("from-zero", change("price", "0", "10")),
      ...Array.from({ length: 10 }, (_, i) => update(`X${i}`, change("price", "10", "100"))),
    ];
    const [moved] = tally(ops).counts();
    expect(moved?.count).toBe(12);
    expect(moved?.examples.map((e) => e.identifier)).toEqual(["up", "down", "X0", "X1", "X2"]);
  });

  it("weighs only updates and only the fields it was given", () => {
    const create: PlannedOp = { kind: "create", action: "add", identifier: "N", line: 3, changes: [change("stock", null, "0")] };
    const t = tally([create, update("A", change("stock", "4", "0"), change("price", "10", "0"))], ["price"]);
    expect(t.fields).toEqual(["price"]);
    expect(t.counts().map((c) => [c.field, c.check, c.count])).toEqual([["price", "zeroed", 1], ["price", "moved", 1]]);
  });
});

describe("checkChangeLimits", () => {
  const facts = (zeroed: number, scopeSize: number) => ({
    counts: [{ field: "stock", check: "zeroed" as const, count: zeroed, examples: [{ identifier: "A", before: "3", after: "0" }] }],
    limits: LIMITS,
    scopeSize,
    at: "file_configs[1]",
  });

  it("trips over the share of the scope, names where to raise it, and is forceable", () => {
    expect(checkChangeLimits(facts(50, 100), false)).toBeNull();
    const trip = checkChangeLimits(facts(51, 100), false);
    expect(trip).toMatchObject({ name: "change_limit", forceable: true });
    expect(trip?.message).toContain("stock would go to zero or empty on 51 of the 100 records in scope (51%), over file_configs[1].change_limits.stock.zeroed 50% (A 3 → 0, and 50 more)");
    expect(trip?.message).toContain("raise the limit in file_configs[1].change_limits.stock");
    expect(checkChangeLimits(facts(51, 100), true)).toBeNull();
  });

  it("a share never allows fewer than five records: a shop of four products may sell out of all of them", () => {
    expect(checkChangeLimits(facts(4, 4), false)).toBeNull();
    expect(checkChangeLimits(facts(6, 6), false)?.name).toBe("change_limit");
  });
});
