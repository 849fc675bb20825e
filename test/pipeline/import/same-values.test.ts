import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runSummary } from "../../../src/cli-output/summary.js";
import type { OrderDraft } from "../../../src/mapping/index.js";
import { planOrder, type OrderPlanConfig } from "../../../src/pipeline/import/plan-orders.js";
import { countSame } from "../../../src/pipeline/import/plan.js";
import type { Order } from "../../../src/service/index.js";
import { emptyCounts, type RunRecord } from "../../../src/state/index.js";
import { csv, openHarness, type Harness } from "../harness.js";

/**
 * The plan says what changes (issue #29): a debug run right after a live run
 * of the same feed, against the embedded service over HTTP. A field whose new
 * value is the one the service holds is `same` in plan.csv and counted apart;
 * a full run still sends it, a diff run plans the record `unchanged`.
 */
const HEADER = ["guid", "title", "stock", "cost"];
const rows = (stock: (i: number) => string): string[][] => Array.from({ length: 20 }, (_, i) => [`BN${String(i).padStart(4, "0")}`, `Bolt ${i}`, stock(i), `3.${String(i).padStart(2, "0")}`]);
const FIELD_MAP = { guid: "guid", title: "title", stock: "stock", cost: "cost" };

function debugFile(h: Harness, runId: string, name: string): string {
  return readFileSync(path.join(h.dir, ".conveyor", "runs", runId, "debug", name), "utf8");
}

describe("fields the service holds already", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await openHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it("are marked same in plan.csv, counted apart, and a diff run plans their records unchanged", async () => {
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit" });
    h.writeFeed("feed-1.csv", csv(HEADER, rows(() => "148")));
    const live = await h.run(automation);
    expect(live.counts).toMatchObject({ create: 20, failed: 0 });
    expect(h.items().get("BN0007")).toMatchObject({ stock: "148", cost: "3.07" });

    // The same feed, one stock truly changed.
    h.writeFeed("feed-1.csv", csv(HEADER, rows((i) => (i === 7 ? "150" : "148"))));
    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.outcome).toBe("success");
    // A full run sends every record all the same: each is an update, 19 of them with nothing new.
    expect(debug.counts).toMatchObject({ update: 20, unchanged: 0, same: 19, same_fields: 20 * 3 - 1 });
    const plan = debugFile(h, debug.id, "plan.csv").split("\r\n");
    expect(plan[0]).toBe("operation,action,identifier,field,before,after,change");
    expect(plan).toContain("update,edit,BN0003,stock,148,148,same");
    expect(plan).toContain("update,edit,BN0003,cost,3.03,3.03,same");
    expect(plan).toContain("update,edit,BN0007,stock,148,150,changed");
    expect(plan).toContain("update,edit,BN0007,title,Bolt 7,Bolt 7,same");
    expect(plan.filter((l) => l.endsWith(",changed"))).toEqual(["update,edit,BN0007,stock,148,150,changed"]);
    // The bulk file a live run would send still carries every field.
    expect(debugFile(h, debug.id, "bulk-1.csv").split("\r\n")).toContain("edit,BN0003,Bolt 3,148,3.03");
    expect(JSON.parse(debugFile(h, debug.id, "summary.json")).counts).toMatchObject({ same: 19, same_fields: 59 });
    // The stored record, which `conveyor runs` and the API read, keeps them.
    expect((await h.worker.env.store.getRun(debug.id))?.counts).toMatchObject({ same: 19, same_fields: 59 });
    const summary = runSummary(debug);
    expect(summary).toMatch(/changes\s+│ 0 create, 20 update, 0 unchanged/);
    expect(summary).toMatch(/same as service\s+│ 59 fields sent all the same, 19 updates change nothing/);

    // A diff run compares with what the live run applied: only the true change is planned.
    const diff = await h.run(automation, { mode: "debug", diff: true });
    expect(diff.counts).toMatchObject({ update: 1, unchanged: 19, same: 0, same_fields: 0 });
    expect(debugFile(h, diff.id, "plan.csv").split("\r\n").slice(1, -1)).toEqual(["update,edit,BN0007,stock,148,150,changed"]);
    expect(runSummary(diff)).not.toContain("same as service");
  });

  it("with diff_update, a record whose compared fields the service holds is unchanged; the fields riding along are marked", async () => {
    const automation = h.automation({ field_map: FIELD_MAP, create: "add", update: "edit", diff_update: 1, diff_fields: ["stock"] });
    h.writeFeed("feed-1.csv", csv(HEADER, rows(() => "148")));
    expect((await h.run(automation)).counts).toMatchObject({ create: 20 });
    // Titles edited in the feed ride along only with a stock that changed; with the stock the service's, nothing is sent.
    h.writeFeed("feed-1.csv", csv(HEADER, rows((i) => (i === 2 ? "150" : "148")).map((r, i) => (i < 4 ? [r[0] ?? "", `Bolt ${i} M8`, r[2] ?? "", r[3] ?? ""] : r))));
    const debug = await h.run(automation, { mode: "debug" });
    expect(debug.counts).toMatchObject({ update: 1, unchanged: 19, same: 0, same_fields: 1 });
    const plan = debugFile(h, debug.id, "plan.csv").split("\r\n").slice(1, -1);
    expect(plan).toEqual(["update,edit,BN0002,title,Bolt 2,Bolt 2 M8,changed", "update,edit,BN0002,stock,148,150,changed", "update,edit,BN0002,cost,3.02,3.02,same"]);
  });
});

describe("an order's fields the service holds already", () => {
  const draft = (fields: Record<string, string>): OrderDraft => ({ identifier: "A-1", fields: { ordernumber: "A-1", ...fields }, billing: null, shipping: null, items: [], shipments: [], refunds: [], lines: [2], ignored: new Set() });
  const service: Order = { oid: 7, ordernumber: "A-1", status: "PENDING", email: "a@example.com" };
  const config = (fields: string[] | null): OrderPlanConfig => ({ identifier: "ordernumber", create: true, update: true, remove: false, liveDiff: { fields: fields && new Set(fields), tolerance: 0 } });

  it("are left out of an update when compared, and marked when they ride along with a change", () => {
    // Every field compared: the email the service holds is not sent.
    const all = planOrder(config(null), { draft: draft({ status: "READY", email: "a@example.com" }), service, snapshot: undefined });
    expect("op" in all && all.op.changes).toEqual([{ field: "status", before: "PENDING", after: "READY", same: false }]);
    // Only the status compared: the email rides along with its change, marked as the service's.
    const some = planOrder(config(["status"]), { draft: draft({ status: "READY", email: "a@example.com" }), service, snapshot: undefined });
    expect("op" in some && some.op.changes).toEqual([
      { field: "status", before: "PENDING", after: "READY", same: false },
      { field: "email", before: "a@example.com", after: "a@example.com", same: true },
    ]);
    const counts = { same: 0, same_fields: 0 };
    if ("op" in some) countSame(counts, some.op);
    expect(counts).toEqual({ same: 0, same_fields: 1 });
  });
});

describe("the summary's same figure", () => {
  it("is in the singular for one, and absent when no field was the same", () => {
    const record = (same: number, sameFields: number): RunRecord => ({
      id: "r20261125T101500-abc123", automation: "stock", account: "demo", mode: "debug", trigger: "manual", diff: false, force: false, notify: false, email: null,
      started: "2026-11-25T10:15:00.000Z", finished: "2026-11-25T10:15:02.000Z", outcome: "success", counts: { ...emptyCounts(), rows: 2, update: 2, same, same_fields: sameFields },
      requests: { read: 1, write: 1 }, bytes: 0, files: [], debug_files: [], guard: null, error: null, heartbeat: null,
    });
    expect(runSummary(record(1, 1))).toMatch(/same as service\s+│ 1 field sent all the same, 1 update changes nothing/);
    expect(runSummary(record(0, 2))).toMatch(/same as service\s+│ 2 fields sent all the same\s/);
    expect(runSummary(record(0, 0))).not.toContain("same as service");
  });
});
