import { describe, expect, it } from "vitest";
import { registerSecret } from "../../src/secrets.js";
import { FailureTally, OTHER_REASONS, failedRecordsError, failureLine, failureLines, reasonOf } from "../../src/pipeline/failure-tally.js";

const TITLE = "the title field is required to create an item";

describe("the failed records of a run, by reason", () => {
  it("takes the record out of the service's message, so one reason groups every record", () => {
    expect(reasonOf("SKU-1", `cannot add guid "SKU-1": ${TITLE}`)).toBe(TITLE);
    expect(reasonOf("SKU-1", 'cannot add: an item with guid "SKU-1" already exists (use edit or relist)')).toBe('cannot add: an item with guid "…" already exists (use edit or relist)');
    expect(reasonOf("SKU-1", "not sent: the service is unavailable")).toBe("not sent: the service is unavailable");
    expect(reasonOf("", "  refused  ")).toBe("refused");
    // Only as a word of its own: identifier 1 is not the 1 of bulk-1.csv.
    expect(reasonOf("1", "the service's result for bulk-1.csv does not mention row 1 (job done)")).toBe("the service's result for bulk-1.csv does not mention row … (job done)");
  });

  it("counts each reason, keeps its first three identifiers, most frequent first", () => {
    const tally = new FailureTally();
    tally.add("A", "cannot edit: no item with sku \"A\"");
    for (const id of ["S1", "S2", "S3", "S4", "S5"]) tally.add(id, `cannot add guid "${id}": ${TITLE}`);
    expect(tally.list()).toEqual([
      { message: TITLE, count: 5, examples: ["S1", "S2", "S3"] },
      { message: 'cannot edit: no item with sku "…"', count: 1, examples: ["A"] },
    ]);
    expect(failureLine({ message: TITLE, count: 5, examples: ["S1", "S2", "S3"] })).toBe(`${TITLE} (5: S1, S2, S3 and 2 more)`);
    expect(failureLines(tally.list())).toEqual([
      "6 records failed, by the service's message:",
      `  ${TITLE} (5: S1, S2, S3 and 2 more)`,
      '  cannot edit: no item with sku "…" (1: A)',
    ]);
  });

  it("lists the reasons unless the run's error already quotes the only one", () => {
    const one = [{ message: TITLE, count: 2, examples: ["S1", "S2"] }];
    expect(failureLines(one, { message: `2 records refused by the service: ${TITLE} (2: S1, S2)` })).toEqual([]);
    expect(failureLines(one, { message: "the service is unavailable" })).toHaveLength(2);
    expect(failureLines(one, null)).toHaveLength(2);
    expect(failureLines([])).toEqual([]);
  });

  it("keeps a bounded number of reasons: the rest are counted together, last", () => {
    const tally = new FailureTally();
    for (let i = 0; i < 30; i++) tally.add(`X${i}`, `reason ${"x".repeat(i + 1)}`);
    const list = tally.list();
    expect(list).toHaveLength(21);
    expect(list.at(-1)).toEqual({ message: OTHER_REASONS, count: 10, examples: ["X20", "X21", "X22"] });
    expect(list.reduce((n, f) => n + f.count, 0)).toBe(30);
  });

  it("counts reasons that differ only in their figures as one, quoting the first", () => {
    const tally = new FailureTally();
    for (let i = 1; i <= 4; i++) tally.add(`R${i}`, `the service's result for bulk-1.csv does not mention row ${i} (job done)`);
    expect(tally.list()).toEqual([{ message: "the service's result for bulk-1.csv does not mention row 1 (job done)", count: 4, examples: ["R1", "R2", "R3"] }]);
  });

  it("masks a registered secret in a message and an identifier", () => {
    registerSecret("hunter2-Secret");
    const tally = new FailureTally();
    tally.add("A", "refused: https://user:hunter2-Secret@host.test/feed");
    tally.add("hunter2-Secret", "refused");
    expect(JSON.stringify(tally.list())).not.toContain("hunter2-Secret");
  });

  it("says why a run whose records failed ended failed, and what to do", () => {
    const err = failedRecordsError("r1", [{ message: TITLE, count: 2, examples: ["SKU-1", "SKU-2"] }, { message: "other", count: 1, examples: ["B"] }], { count: 0, first: null });
    expect(err?.code).toBe("records_failed");
    expect(err?.message).toBe(`3 records refused by the service: ${TITLE} (2: SKU-1, SKU-2); and 1 other message`);
    expect(err?.hint).toContain("conveyor debug-files r1 errors.csv");
    const rows = failedRecordsError("r2", [], { count: 1, first: "feed.csv: line 2: stock is not a number" });
    expect(rows?.message).toBe("1 row had errors and no record was applied; the first: feed.csv: line 2: stock is not a number");
    expect(failedRecordsError("r3", [], { count: 0, first: null })).toBeNull();
  });
});
