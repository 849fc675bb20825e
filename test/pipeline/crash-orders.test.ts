import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/state/index.js";
import { interruptedRun, newRoot, newScene, orderCatalogue, type Scene } from "./crash-env.js";

/**
 * An order import killed at each crash point (a body's answer read, a body
 * answered but its answer not read, every body applied but nothing
 * committed) leaves a record that says what the service holds, and a re-run
 * in a fresh process ends on the orders of one clean run. Four orders
 * exist; the feed updates them and creates six, two orders a body.
 */
const root = newRoot();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const definition = {
  name: "Crash orders", slug: "crash-orders", active: true, schedule: "0 * * * *", type: "orders", action: "import",
  connection: { type: "sdsftp", path: "orders" },
  file_configs: [{ name: "orders-1\\.csv", select: "new", after_import: "move:done", identifier: "ordernumber", create: true, update: true,
    field_map: { ordernumber: "Order", channel: "Channel", total: "Total", status: "Status", "items.sku": "SKU", "items.quantity": "Qty" } }],
};
const number = (i: number): string => `O-${i}`;
const FEED = ["Order,Channel,Total,Status,SKU,Qty", ...Array.from({ length: 10 }, (_, i) => `${number(i)},web,7.00,READY,${i < 4 ? "X,1" : "Y,2"}`)].join("\n") + "\n";

async function prepared(): Promise<Scene> {
  const scene = newScene(root, definition, { CONVEYOR_BULK_ROWS: "2" });
  await scene.withWorker(async (worker) => {
    for (let i = 0; i < 4; i++) await worker.env.client.createOrder({ ordernumber: number(i), channel: "web", total: "5.00", status: "PENDING", items: [{ sku: "X", quantity: "1" }] });
  });
  scene.putFeed("orders-1.csv", FEED);
  return scene;
}

/** Orders carrying the feed's values: what reached the service. */
const landed = (orders: unknown[]): number => orders.filter((o) => (o as { total: string }).total === "7.00").length;

describe("an order import killed at each crash point", () => {
  let clean: unknown[];
  beforeAll(async () => {
    const scene = await prepared();
    const run = await scene.cli(["run", scene.definition, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    clean = await scene.withWorker((w) => orderCatalogue(w.env.client));
    expect(landed(clean)).toBe(10);
  }, 120_000);

  it.each([
    ["after-result:1", "the first body's answer was read"],
    ["after-send:2", "the second body was answered, its answer not read"],
    ["after-apply", "every body was applied, nothing committed"],
  ])("%s (%s): the record says what the service holds, a re-run converges", async (point) => {
    const scene = await prepared();
    const crashed = await scene.cli(["run", scene.definition, "--json"], { CONVEYOR_FAULT: point });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");

    const [record, before] = await scene.withWorker(async (w) => [await interruptedRun(w, scene.slug), await orderCatalogue(w.env.client)] as const);
    const held = landed(before);
    expect(record.error?.code).toBe("interrupted");
    expect(record.counts).toMatchObject({ rows: 10, create: 6, update: 4 });
    const applied = record.applied;
    if (!applied) throw new Error("the record has no applied counts");
    expect(applied).toMatchObject({ planned_files: 5, failed: 0 });
    const confirmed = applied.created + applied.updated;
    if (point === "after-send:2") {
      // An order body has no job: the service answered it, so it holds all of it, but the record cannot know that.
      expect(applied.files).toBe(1);
      expect(record.unconfirmed_files).toEqual([{ name: expect.stringMatching(/\.json$/) as unknown, rows: 2, job: null }]);
      expect(held).toBe(confirmed + 2);
      expect(record.error?.message).toMatch(/1 file was sent and its result is unknown \(bulk-\d+\.json, 2 rows, job unknown\)/);
    } else {
      expect(applied.files).toBe(point === "after-apply" ? 5 : 1);
      expect(record.unconfirmed_files).toEqual([]);
      expect(held).toBe(confirmed);
    }
    expect(scene.feedNames()).toEqual(["orders-1.csv"]);

    const again = await scene.cli(["run", scene.definition, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const rerun = JSON.parse(again.stdout) as RunRecord;
    expect(rerun.outcome).toBe("success");
    expect(rerun.counts.failed).toBe(0);
    // The orders that reached the service are found in its scope: updated (or unchanged), never created twice.
    expect(rerun.counts.create).toBe(10 - before.length);
    expect(await scene.withWorker((w) => orderCatalogue(w.env.client))).toEqual(clean);
    expect(scene.feedNames()).toEqual(["done"]);
  }, 120_000);
});
