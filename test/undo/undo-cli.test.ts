import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/state/index.js";
import { PgSchemas } from "../helpers/postgres.js";
import { csv } from "../pipeline/harness.js";
import { newRoot, newScene, productCatalogue, type Scene } from "../pipeline/crash-env.js";

/**
 * `conveyor undo` in a child process: killed (kill -9, CONVEYOR_FAULT) while
 * it applies, then run again, it converges on the catalogue before the import;
 * with the journal in SQLite and in PostgreSQL. Order imports are refused, with why.
 */
const root = newRoot();
const pgs = new PgSchemas();
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await pgs.end();
});

const FIELDS = ["title", "stock", "cost", "listed"];
const definition = {
  name: "Undo products", slug: "undo-products", active: true, schedule: "0 * * * *", type: "products", action: "import",
  connection: { type: "sdsftp", path: "feeds" },
  file_configs: [{ name: "feed-1\\.csv", identifier: "guid", create: "start", update: "edit", remove: "end", remove_limit: "100%",
    field_map: { guid: "guid", title: "title", stock: "stock", cost: "cost" } }],
};
// Thirty products exist; the feed changes the stock of twenty, leaves out five (ended) and adds ten.
const FEED = csv(["guid", "title", "stock", "cost"], [
  ...Array.from({ length: 25 }, (_, i) => [`P${String(i).padStart(2, "0")}`, `Part ${i}`, i < 20 ? String(100 + i) : String(i), "2.5"]),
  ...Array.from({ length: 10 }, (_, i) => [`N${i}`, `New ${i}`, "1", "3"]),
]);

async function prepared(env: Record<string, string>): Promise<{ scene: Scene; before: Array<Record<string, string>>; run: RunRecord }> {
  const scene = newScene(root, definition, { CONVEYOR_BULK_ROWS: "10", ...env });
  const before = await scene.withWorker(async (worker) => {
    for (let i = 0; i < 30; i++) await worker.env.client.itemAction("start", `P${String(i).padStart(2, "0")}`, { title: `Part ${i}`, stock: String(i), cost: "2.5" });
    return productCatalogue(worker.env.client, FIELDS);
  });
  scene.putFeed("feed-1.csv", FEED);
  const result = await scene.cli(["run", scene.definition, "--json"]);
  expect(result.code, result.stderr).toBe(0);
  const run = JSON.parse(result.stdout) as RunRecord;
  expect(run.counts).toMatchObject({ update: 25, create: 10, remove: 5 });
  return { scene, before, run };
}

describe("conveyor undo", () => {
  it.each([
    ["SQLite", () => ({})],
    ["PostgreSQL", () => ({ CONVEYOR_DATABASE_URL: pgs.url(pgs.fresh()) })],
  ])("killed mid-apply, then run again, converges (journal in %s)", async (_name, env) => {
    const { scene, before, run } = await prepared(env());
    const crashed = await scene.cli(["undo", run.id, "--automation", scene.definition, "--json"], { CONVEYOR_FAULT: "after-send:2" });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
    const again = await scene.cli(["undo", run.id, "--automation", scene.definition, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const undo = JSON.parse(again.stdout) as RunRecord;
    expect(undo).toMatchObject({ undo_of: run.id, conflicts: 0 });
    const after = await scene.withWorker((w) => productCatalogue(w.env.client, FIELDS));
    const listed = after.filter((p) => p.listed === "1");
    expect(listed).toEqual(before);
  }, 180_000);

  it("refuses an order import's run, and says why", async () => {
    const scene = newScene(root, { ...definition, slug: "undo-orders", type: "orders", file_configs: [{ name: "orders\\.csv", identifier: "ordernumber", create: true, field_map: { ordernumber: "ordernumber" } }] });
    const id = await scene.withWorker(async (w) => {
      const record: RunRecord = {
        id: "run-orders-1", automation: "undo-orders", account: w.env.account, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null,
        started: new Date().toISOString(), finished: new Date().toISOString(), outcome: "success", counts: { rows: 0, row_errors: 0, create: 0, update: 0, unchanged: 0, remove: 0, skipped: 0, failed: 0, merged: 0, same_fields: 0, same: 0 },
        requests: { read: 0, write: 0 }, bytes: 0, files: [], debug_files: [], guard: null, error: null, heartbeat: null,
      };
      await w.env.store.createRun(record);
      return record.id;
    });
    const result = await scene.cli(["undo", id, "--automation", scene.definition, "--json"]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("a shipment sent to a carrier cannot be recalled");
  }, 60_000);
});
