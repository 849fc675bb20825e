import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/** A change limit through the daemon API: the run stops with the guard in its record, and force=1 is the same switch as --force. */
let t: TestDaemon;
let id = "";

beforeAll(async () => {
  t = await startTestDaemon({
    definitions: {
      "zeroed.json": stockDefinition({
        name: "Zeroed stock",
        parameters: [],
        // Three products: a count, since a share never allows fewer than five records.
        file_configs: [{ name: "zeroed\\.csv", min_age: 0, field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit", change_limits: { stock: { zeroed: 1 } } }],
      }),
    },
  });
  const feeds = path.join(t.settings.storage, "demo", "feeds");
  mkdirSync(feeds, { recursive: true });
  writeFileSync(path.join(feeds, "zeroed.csv"), "sku,qty\nA1,0\nB2,0\nC3,0\n");
  const list = await t.request("GET", "/v3/automations/custom");
  id = String((list.body.automations as Array<{ id: string; slug: string }>).find((a) => a.slug === "zeroed-stock")?.id);
});

afterAll(async () => {
  await t.close();
});

describe("change_limits through the API", () => {
  it("a run that zeroes every stock stops with guard change_limit; force=1 applies it", async () => {
    const started = await t.request("GET", `/v3/automations/custom/${id}/run`);
    const run = await waitForRun(t, String(started.body.id));
    expect(run.outcome).toBe("failed");
    expect(run.guard).toMatchObject({ name: "change_limit" });
    expect(String((run.guard as { message: string }).message)).toContain("stock would go to zero or empty on 3 of the 3 records in scope (100%), over file_configs[0].change_limits.stock.zeroed 1 (A1 1 → 0, B2 2 → 0, C3 3 → 0)");

    const forced = await t.request("GET", `/v3/automations/custom/${id}/run?force=1&wait=30`);
    expect(forced.body).toMatchObject({ result: "success", state: "finished" });
    expect(forced.body.run).toMatchObject({ force: true, outcome: "success", counts: { update: 3 } });
    expect((forced.body.run as { guard?: unknown }).guard ?? null).toBeNull();
  });
});
