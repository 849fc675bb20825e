import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/state/index.js";
import { interruptedRun, newRoot, newScene, productCatalogue, type Scene } from "./crash-env.js";
import { PgSchemas } from "../helpers/postgres.js";
import { csv } from "./harness.js";

/**
 * A product import killed at each crash point (a bulk file's result read, a
 * bulk file sent with its result unread, every file applied but nothing
 * committed) leaves a record that says what the service holds, and a re-run
 * in a fresh process ends on the catalogue of one clean run. Ten products
 * exist; the feed edits them and adds twenty, three bulk files of ten.
 */
const root = newRoot();
const pgs = new PgSchemas();
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await pgs.end();
});

const FIELDS = ["title", "stock", "cost"];
const definition = {
  name: "Crash products", slug: "crash-products", active: true, schedule: "0 * * * *", type: "products", action: "import",
  connection: { type: "sdsftp", path: "feeds" },
  file_configs: [{ name: "feed-1\\.csv", select: "new", after_import: "move:done", identifier: "guid", create: "add", update: "edit",
    field_map: { guid: "guid", title: "title", stock: "stock", cost: "cost" } }],
};
const FEED = csv(["guid", "title", "stock", "cost"], Array.from({ length: 30 }, (_, i) => [`P${String(i).padStart(2, "0")}`, `Part ${i}`, String(i), "2.5"]));

async function prepared(env: Record<string, string> = {}): Promise<Scene> {
  const scene = newScene(root, definition, { CONVEYOR_BULK_ROWS: "10", ...env });
  await scene.withWorker(async (worker) => {
    for (let i = 0; i < 10; i++) await worker.env.client.itemAction("add", `P${String(i).padStart(2, "0")}`, { title: `Old ${i}`, stock: "0", cost: "1" });
  });
  scene.putFeed("feed-1.csv", FEED);
  return scene;
}

/** Products carrying the feed's values: what reached the service. */
const landed = (catalogue: Array<Record<string, string>>): number => catalogue.filter((p) => p.title?.startsWith("Part ")).length;

describe("a product import killed at each crash point", () => {
  let clean: Array<Record<string, string>>;
  let cleanSnapshot: number;
  beforeAll(async () => {
    const scene = await prepared();
    const run = await scene.cli(["run", scene.definition, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    [clean, cleanSnapshot] = await scene.withWorker(async (w) => [await productCatalogue(w.env.client, FIELDS), await w.env.store.snapshotCount(`${scene.slug}#0`)] as const);
    expect(landed(clean)).toBe(30);
  }, 120_000);

  it.each([
    ["after-result:1", "the first bulk file's result was read"],
    ["after-send:2", "the second bulk file was sent, its result unread"],
    ["after-apply", "every file was applied, nothing committed"],
  ])("%s (%s): the record says what the service holds, a re-run converges", (point) => crashAndRerun(point), 120_000);

  it("after-send:2 with the state in PostgreSQL: the same record, the same convergence", async () => {
    const schema = pgs.fresh();
    await crashAndRerun("after-send:2", { CONVEYOR_DATABASE_URL: pgs.url(schema) });
    // Both runs' records, the interrupted one and the re-run, are in PostgreSQL.
    const { rows } = await pgs.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".runs`);
    expect(rows[0]?.n).toBe(2);
  }, 120_000);

  async function crashAndRerun(point: string, env: Record<string, string> = {}): Promise<void> {
    const scene = await prepared(env);
    const crashed = await scene.cli(["run", scene.definition, "--json"], { CONVEYOR_FAULT: point });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");

    const [record, held] = await scene.withWorker(async (w) => [await interruptedRun(w, scene.slug), landed(await productCatalogue(w.env.client, FIELDS))] as const);
    expectTrueRecord(record, held, point);
    // Nothing was committed: the feed is still there, unmoved, for the re-run.
    expect(scene.feedNames()).toEqual(["feed-1.csv"]);

    const again = await scene.cli(["run", scene.definition, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const rerun = JSON.parse(again.stdout) as RunRecord;
    expect(rerun.outcome).toBe("success");
    expect(rerun.counts.failed).toBe(0);
    expect(rerun.unconfirmed_files).toBeUndefined();
    expect(rerun.applied?.failed).toBe(0);
    await scene.withWorker(async (w) => {
      expect(await productCatalogue(w.env.client, FIELDS)).toEqual(clean);
      expect(await w.env.store.snapshotCount(`${scene.slug}#0`)).toBe(cleanSnapshot);
    });
    expect(scene.feedNames()).toEqual(["done"]);
  }
});

/** The interrupted record's counts against the products that carry the feed's values. */
function expectTrueRecord(record: RunRecord, held: number, point: string): void {
  expect(record.outcome).toBe("failed");
  expect(record.error?.code).toBe("interrupted");
  expect(record.counts).toMatchObject({ rows: 30, create: 20, update: 10 });
  const applied = record.applied;
  if (!applied) throw new Error("the record has no applied counts");
  const confirmed = applied.created + applied.updated;
  expect(applied.planned_files).toBe(3);
  expect(applied.failed).toBe(0);
  expect(record.error?.message).toContain(`the service confirmed`);
  if (point === "after-apply") {
    expect(applied.files).toBe(3);
    expect(record.unconfirmed_files).toEqual([]);
    expect(confirmed).toBe(held);
    expect(confirmed).toBe(30);
  } else if (point === "after-result:1") {
    expect(applied.files).toBe(1);
    expect(record.unconfirmed_files).toEqual([]);
    expect(confirmed).toBe(10);
    expect(held).toBe(confirmed);
  } else {
    expect(applied.files).toBe(1);
    const [unknown] = record.unconfirmed_files ?? [];
    expect(unknown).toMatchObject({ name: expect.stringMatching(/\.csv$/) as unknown, rows: 10, job: expect.any(String) as unknown });
    // The killed process's job may have applied some of its rows before it died: no fewer than confirmed, no more than sent.
    expect(held).toBeGreaterThanOrEqual(confirmed);
    expect(held).toBeLessThanOrEqual(confirmed + 10);
    expect(record.error?.message).toContain(`1 file was sent and its result is unknown (${unknown?.name ?? ""}, 10 rows, job ${unknown?.job ?? ""})`);
  }
}
