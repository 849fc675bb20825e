import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/state/index.js";
import { interruptedRun, newRoot, newScene, productCatalogue, type Scene } from "./crash-env.js";
import { csv } from "./harness.js";

/**
 * A `bulk_file: 1` import killed at each crash point leaves a record that
 * says what the service holds, and a re-run in a fresh process ends on the
 * catalogue of one clean run. Ten products exist; the file edits them and
 * adds twenty, three bulk files of ten. Such a pass has no scope: an `add`
 * row that reached the service before the crash is refused as a duplicate
 * on the re-run (the catalogue is right all the same), and the re-run's
 * failures are exactly those rows.
 */
const root = newRoot();
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FIELDS = ["title", "stock"];
const definition = {
  name: "Crash bulk", slug: "crash-bulk", active: true, schedule: "0 * * * *", type: "products", action: "import",
  connection: { type: "sdsftp", path: "feeds" },
  file_configs: [{ name: "bulk-1\\.csv", select: "new", after_import: "move:done", bulk_file: 1, field_map: {}, error_limit: "100%" }],
};
const guid = (i: number): string => `B${String(i).padStart(2, "0")}`;
const FEED = csv(["action", "guid", "title", "stock"], Array.from({ length: 30 }, (_, i) => [i < 10 ? "edit" : "add", guid(i), `Bulk ${i}`, String(i)]));

async function prepared(): Promise<Scene> {
  const scene = newScene(root, definition, { CONVEYOR_BULK_ROWS: "10" });
  await scene.withWorker(async (worker) => {
    for (let i = 0; i < 10; i++) await worker.env.client.itemAction("add", guid(i), { title: `Old ${i}`, stock: "0" });
  });
  scene.putFeed("bulk-1.csv", FEED);
  return scene;
}

const landed = (catalogue: Array<Record<string, string>>): number => catalogue.filter((p) => p.title?.startsWith("Bulk ")).length;

describe("a bulk-file import killed at each crash point", () => {
  let clean: Array<Record<string, string>>;
  beforeAll(async () => {
    const scene = await prepared();
    const run = await scene.cli(["run", scene.definition, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    clean = await scene.withWorker((w) => productCatalogue(w.env.client, FIELDS));
    expect(landed(clean)).toBe(30);
  }, 120_000);

  it.each([
    ["after-result:1", "the first bulk file's result was read"],
    ["after-send:2", "the second bulk file was sent, its result unread"],
    ["after-apply", "every file was applied, the ledger not written"],
  ])("%s (%s): the record says what the service holds, a re-run converges", async (point) => {
    const scene = await prepared();
    const crashed = await scene.cli(["run", scene.definition, "--json"], { CONVEYOR_FAULT: point });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");

    const [record, before] = await scene.withWorker(async (w) => [await interruptedRun(w, scene.slug), await productCatalogue(w.env.client, FIELDS)] as const);
    expect(record.error?.code).toBe("interrupted");
    expect(record.counts).toMatchObject({ rows: 30, create: 20, update: 10 });
    const applied = record.applied;
    if (!applied) throw new Error("the record has no applied counts");
    expect(applied).toMatchObject({ planned_files: 3, failed: 0 });
    const confirmed = applied.created + applied.updated;
    const held = landed(before);
    if (point === "after-send:2") {
      expect(applied.files).toBe(1);
      expect(record.unconfirmed_files).toEqual([{ name: "bulk-2.csv", rows: 10, job: expect.any(String) as unknown }]);
      expect(held).toBeGreaterThanOrEqual(confirmed);
      expect(held).toBeLessThanOrEqual(confirmed + 10);
    } else {
      expect(applied.files).toBe(point === "after-apply" ? 3 : 1);
      expect(record.unconfirmed_files).toEqual([]);
      expect(held).toBe(confirmed);
    }
    expect(scene.feedNames()).toEqual(["bulk-1.csv"]);

    const again = await scene.cli(["run", scene.definition, "--json"]);
    const rerun = JSON.parse(again.stdout) as RunRecord;
    const addsHeld = before.filter((p) => Number(p.guid?.slice(1)) >= 10).length;
    expect(rerun.counts.failed).toBe(addsHeld);
    expect(rerun.outcome).toBe(addsHeld === 0 ? "success" : "partial");
    expect(await scene.withWorker((w) => productCatalogue(w.env.client, FIELDS))).toEqual(clean);
    // The edits went through, so the file is done with: the next run does not send it again.
    expect(scene.feedNames()).toEqual(["done"]);
  }, 120_000);
});
