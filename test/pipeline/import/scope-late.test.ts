import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConveyorError } from "../../../src/errors.js";
import { ProductPlanner } from "../../../src/pipeline/import/product-planner.js";
import { MAX_HELD_ROWS } from "../../../src/pipeline/import/scope-wait.js";
import { SETTLED } from "../../../src/pipeline/import/read.js";
import { ServiceClient } from "../../../src/service/index.js";
import { csv, debugFiles, openHarness, type Harness } from "../harness.js";

/**
 * Issue 28: a diff run reads and settles its feed while the scope read is
 * under way. Here the service's scope export is held back until the planner
 * asks for the scope after the whole feed is read, so every row is settled
 * or held before the scope is in; the outcome must be a run's that had the
 * scope first. Records deleted from the service meanwhile (their rows
 * unchanged since the snapshot) are planned as creates, as they would be.
 */
const HEADER = ["guid", "title", "stock"];
const N = 240;
const base = (): string[][] => Array.from({ length: N }, (_, i) => [`F${String(i).padStart(4, "0")}`, `Item ${i}`, String(i % 7)]);
/** Every 20th stock changed, rows 0-4 gone, three new rows; F0007's row has a cell too many (a row error). */
const next = (): string[][] => [
  ...base()
    .slice(5)
    .map((r, j) => (j % 20 === 0 ? [r[0] ?? "", r[1] ?? "", "99"] : r[0] === "F0007" ? [...r, "extra"] : r)),
  ...["N1", "N2", "N3"].map((g) => [g, `New ${g}`, "1"]),
];
const DELETED = ["F0011", "F0100", "F0239"];

/** The run's plan and bulk files, header first and their lines sorted: a vanished record's create comes after the rest of the plan. */
describe("a diff run before its scope is in", () => {
  let h: Harness;
  const exportRecordPages = ServiceClient.prototype.exportRecordPages;
  /** What happened, in order: each settle call and the scope export's release. */
  let events: string[] = [];
  /** Set before a run whose scope export waits until the planner asks for the scope. */
  let gate: { held: Promise<void>; release: () => void } | null = null;
  let failScope = false;
  const holdScope = (): void => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    gate = { held, release };
  };

  beforeEach(async () => {
    h = await openHarness({ CONVEYOR_DEBUG_ROWS: "50" });
    events = [];
    gate = null;
    failScope = false;
    ServiceClient.prototype.exportRecordPages = async function* (this: ServiceClient, ...args: Parameters<ServiceClient["exportRecordPages"]>) {
      if (failScope) throw new ConveyorError("service_rejected", "the scope export failed on purpose");
      if (gate) await gate.held;
      yield* exportRecordPages.apply(this, args);
    };
    const scopeIn = ProductPlanner.prototype.scopeIn;
    vi.spyOn(ProductPlanner.prototype, "scopeIn").mockImplementation(function (this: ProductPlanner) {
      if (!events.includes("scope")) events.push("scope");
      gate?.release();
      return scopeIn.call(this);
    });
    const settle = ProductPlanner.prototype.settle;
    vi.spyOn(ProductPlanner.prototype, "settle").mockImplementation(async function (this: ProductPlanner, ...args: Parameters<ProductPlanner["settle"]>) {
      const codes = await settle.apply(this, args);
      events.push(`settle ${codes.filter((c) => c === SETTLED.unchanged).length}`);
      return codes;
    });
  });

  afterEach(async () => {
    ServiceClient.prototype.exportRecordPages = exportRecordPages;
    vi.restoreAllMocks();
    await h.close();
  });

  it("settles the feed first, plans vanished records as creates, and gives the plan of a run that had the scope", async () => {
    const automation = h.automation({ field_map: { guid: "guid", title: "title", stock: "stock" }, create: "add", update: "edit", remove: "delete" });
    h.writeFeed("feed.csv", csv(HEADER, base()));
    expect((await h.run(automation)).counts).toMatchObject({ create: N });
    h.worker.embedded?.context.db.prepare(`DELETE FROM items WHERE guid IN (${DELETED.map(() => "?").join(", ")})`).run(...DELETED);
    h.writeFeed("feed.csv", csv(HEADER, next()));

    const first = await h.run(automation, { mode: "debug", diff: true });
    const firstEvents = events;
    events = [];
    holdScope();
    const late = await h.run(automation, { mode: "debug", diff: true });

    // Every settle of the held run came before the scope was let through, and they settled the feed past the 50 rows records.csv keeps.
    expect(events.at(-1)).toBe("scope");
    const settled = events.filter((e) => e.startsWith("settle")).reduce((sum, e) => sum + Number(e.split(" ")[1]), 0);
    expect(settled).toBeGreaterThan(150);
    expect(firstEvents.length).toBeGreaterThan(0);

    const changed = Math.ceil((N - 5) / 20);
    for (const run of [first, late]) {
      expect(run.outcome).toBe("partial");
      // F0007's row failed: its record is not removed, though the feed named it only in that row.
      expect(run.counts).toMatchObject({ create: 3 + DELETED.length, update: changed, remove: 5, row_errors: 1, unchanged: N - 5 - changed - DELETED.length - 1 });
    }
    expect(late.counts).toEqual(first.counts);
    expect(debugFiles(h, late)).toEqual(debugFiles(h, first));

    // Live, with the scope held: the deleted records are back, the five the feed dropped are gone, the snapshot settles them next time.
    holdScope();
    const live = await h.run(automation, { diff: true });
    expect(live.counts).toMatchObject({ create: 3 + DELETED.length, update: changed, remove: 5, row_errors: 1, unchanged: first.counts.unchanged });
    const items = h.items();
    for (const id of DELETED) expect(items.get(id)?.title).toBe(`Item ${Number(id.slice(1))}`);
    for (let i = 0; i < 5; i++) expect(items.has(`F000${i}`)).toBe(false);
    expect(items.has("F0007")).toBe(true);
    expect(items.get("F0005")?.stock).toBe("99");
    const again = await h.run(automation, { diff: true });
    expect(again.counts).toMatchObject({ create: 0, update: 0, remove: 0, row_errors: 1, unchanged: N - 5 + 3 - 1 });
  });

  it("holds pages for the scope up to its limit, then waits for it, and plans them in file order", async () => {
    const rows = MAX_HELD_ROWS + 1_000;
    const automation = h.automation({ field_map: { guid: "guid", title: "title", stock: "stock" }, create: "add", update: "edit" });
    const feed = Array.from({ length: rows }, (_, i) => [`G${String(i).padStart(5, "0")}`, `Item ${i}`, "1"]);
    h.writeFeed("feed.csv", csv(HEADER, feed));
    holdScope();
    const run = await h.run(automation, { mode: "debug" });
    expect(run.counts).toMatchObject({ rows, create: rows });
    const folder = path.join(h.dir, ".conveyor", "runs", run.id, "debug");
    const planned: string[] = [];
    for (let n = 1; n <= Math.ceil(rows / 500); n++) {
      const [header = "", ...lines] = readFileSync(path.join(folder, `bulk-${n}.csv`), "utf8").trim().split("\n");
      const at = header.split(",").indexOf("guid");
      planned.push(...lines.map((line) => line.split(",")[at] ?? ""));
    }
    expect(planned).toEqual(feed.map((r) => r[0]));
  });

  it("a scope read that fails fails the run with its error, however far the feed was read", async () => {
    const automation = h.automation({ field_map: { guid: "guid", title: "title", stock: "stock" }, create: "add", update: "edit" });
    h.writeFeed("feed.csv", csv(HEADER, base()));
    await h.run(automation);
    h.writeFeed("feed.csv", csv(HEADER, next()));
    failScope = true;
    for (const mode of ["debug", "prod"] as const) {
      const run = await h.run(automation, { mode, diff: true });
      expect(run.outcome).toBe("failed");
      expect(run.error?.message).toMatch(/scope export failed on purpose/);
    }
    expect(h.items().get("F0005")?.stock).toBe("5");
  });
});
