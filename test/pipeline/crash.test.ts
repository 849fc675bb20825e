import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import type { RunCounts } from "../../src/state/index.js";
import type { Worker } from "../../src/worker.js";
import { newRoot, newScene, orderCatalogue, productCatalogue } from "./crash-env.js";
import { csv } from "./harness.js";

/**
 * The process killed between apply and commit (SIGKILL, as an OOM kill or a
 * power cut), in each kind of import pass: the service has the changes, the
 * snapshot and the ledger do not. The next run must finish the job and
 * leave service and state right.
 */
const root = newRoot();
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Case {
  slug: string;
  /** The definition's file config, on an sdsftp connection to `feeds`. */
  fileConfig: Record<string, unknown>;
  type: "products" | "orders";
  feed: { name: string; text: string };
  seed?: (worker: Worker) => Promise<void>;
  /** Records in the service that carry the feed's values. */
  held: (worker: Worker) => Promise<number>;
  /** The crash-free count of records the feed changes. */
  records: number;
  /** The re-run (a diff run) finds the changes in the service's scope. */
  rerun: Partial<RunCounts> | ((counts: RunCounts) => void);
  /** Snapshot entries after the re-run (a bulk-file pass keeps none). */
  snapshot: number;
  /** What else the re-run leaves in the service. */
  after?: (worker: Worker) => Promise<void>;
}

const PRODUCT_FIELDS = ["title", "stock", "cost"];
const productsHeld = async (w: Worker, prefix: string): Promise<number> => (await productCatalogue(w.env.client, PRODUCT_FIELDS)).filter((p) => p.title?.startsWith(prefix)).length;

const CASES: Case[] = [
  {
    slug: "crash-test",
    type: "products",
    fileConfig: { name: "feed-1\\.csv", select: "new", after_import: "move:done", identifier: "guid", create: "add", update: "edit", field_map: { guid: "guid", title: "title", stock: "stock", cost: "cost" } },
    feed: { name: "feed-1.csv", text: csv(["guid", "title", "stock", "cost"], Array.from({ length: 30 }, (_, i) => [`C${i}`, `Crash part ${i}`, String(i), "1.5"])) },
    held: (w) => productsHeld(w, "Crash part "),
    records: 30,
    // Now in scope, the records are edits, not creates that would fail as duplicates.
    rerun: { rows: 30, create: 0, update: 30, failed: 0 },
    snapshot: 30,
    after: async (w) => {
      const item = w.embedded?.context.db.prepare("SELECT fields FROM items WHERE guid = 'C7'").get() as { fields: string };
      expect(JSON.parse(item.fields)).toMatchObject({ stock: "7", cost: "1.5", title: "Crash part 7" });
    },
  },
  {
    slug: "crash-test-orders",
    type: "orders",
    fileConfig: { name: "orders-1\\.csv", select: "new", after_import: "move:done", identifier: "ordernumber", create: true, update: true, field_map: { ordernumber: "Order", channel: "Channel", total: "Total", status: "Status", "items.sku": "SKU", "items.quantity": "Qty" } },
    feed: { name: "orders-1.csv", text: ["Order,Channel,Total,Status,SKU,Qty", ...Array.from({ length: 10 }, (_, i) => `O-${i},web,7.00,READY,X,${i + 1}`)].join("\n") + "\n" },
    held: async (w) => (await orderCatalogue(w.env.client)).filter((o) => (o as { total: string }).total === "7.00").length,
    records: 10,
    // The orders are found in the service's scope: none is created twice.
    rerun: (counts) => {
      expect(counts).toMatchObject({ rows: 10, create: 0, failed: 0, row_errors: 0 });
      expect(counts.update + counts.unchanged).toBe(10);
    },
    snapshot: 10,
    after: async (w) => expect(await orderCatalogue(w.env.client)).toHaveLength(10),
  },
  {
    slug: "crash-test-bulk",
    type: "products",
    fileConfig: { name: "bulk-1\\.csv", select: "new", after_import: "move:done", bulk_file: 1, field_map: {} },
    feed: { name: "bulk-1.csv", text: csv(["action", "guid", "title", "stock", "cost"], Array.from({ length: 30 }, (_, i) => ["edit", `B${i}`, `Bulk part ${i}`, String(i), "1.5"])) },
    seed: async (w) => {
      for (let i = 0; i < 30; i++) await w.env.client.itemAction("add", `B${i}`, { title: `Old ${i}`, stock: "0", cost: "1" });
    },
    held: (w) => productsHeld(w, "Bulk part "),
    records: 30,
    // A bulk file is sent as it is: its edits go again, and stand.
    rerun: { rows: 30, create: 0, update: 30, failed: 0 },
    snapshot: 0,
    after: async (w) => expect(await productsHeld(w, "Bulk part ")).toBe(30),
  },
];

describe("a crash between apply and commit", () => {
  it.each(CASES.map((c) => [c.slug, c] as const))("%s is finished by the next run: service, snapshot and ledger end right", async (_slug, c) => {
    const connection = { type: "sdsftp", path: "feeds" };
    const scene = newScene(root, { name: `Crash ${c.slug}`, slug: c.slug, active: true, schedule: "0 * * * *", type: c.type, action: "import", connection, file_configs: [c.fileConfig] });
    const key = `${c.slug}#0`;
    if (c.seed) await scene.withWorker(c.seed);
    scene.putFeed(c.feed.name, c.feed.text);

    const crashed = await scene.cli(["run", scene.definition, "--json"], { CONVEYOR_FAULT: "after-apply" });
    expect(crashed.signal, crashed.stderr).toBe("SIGKILL");

    // The service has the changes; the snapshot and the ledger do not; the file is still there.
    const open = await scene.withWorker(async (w) => {
      expect(await c.held(w)).toBe(c.records);
      expect(await w.env.store.snapshotCount(key)).toBe(0);
      const [run] = await w.env.store.listRuns({ automation: c.slug });
      expect(run?.outcome).toBeNull();
      return run;
    });
    expect(scene.feedNames()).toEqual([c.feed.name]);

    const again = await scene.cli(["run", scene.definition, "--json", "--diff"]);
    expect(again.code, again.stderr).toBe(0);
    const run = JSON.parse(again.stdout) as { outcome: string; counts: RunCounts };
    expect(run.outcome).toBe("success");
    if (typeof c.rerun === "function") c.rerun(run.counts);
    else expect(run.counts).toMatchObject(c.rerun);

    await scene.withWorker(async (w) => {
      expect(await w.env.store.snapshotCount(key)).toBe(c.snapshot);
      await c.after?.(w);
      // The crashed run is marked interrupted once its heartbeat is stale.
      const marked = await w.env.store.markInterrupted(new Date(Date.now() + 60_000));
      expect(marked.map((r) => r.id)).toContain(open?.id);
      expect((await w.env.store.getRun(open?.id ?? ""))?.error?.code).toBe("interrupted");
    });
    expect(scene.feedNames()).toEqual(["done"]);
  }, 120_000);
});
