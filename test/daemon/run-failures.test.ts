import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/**
 * A daemon run whose creates the service refuses: the API's run record
 * carries the failures and the error, and errors.csv is one of its debug
 * files, served like a debug run's.
 */
const TITLE = "the title field is required to create an item";
let t: TestDaemon;
let id = "";

beforeAll(async () => {
  t = await startTestDaemon({
    definitions: {
      "untitled.json": stockDefinition({
        name: "Untitled parts",
        parameters: [],
        file_configs: [{ name: "untitled\\.csv", min_age: 0, field_map: { guid: "guid", stock: "stock" }, identifier: "guid", create: "add" }],
      }),
    },
  });
  const feeds = path.join(t.settings.storage, "demo", "feeds");
  mkdirSync(feeds, { recursive: true });
  writeFileSync(path.join(feeds, "untitled.csv"), "guid,stock\nSKU-1,4\nSKU-2,5\n");
  const list = await t.request("GET", "/v3/automations/custom");
  id = String((list.body.automations as Array<{ id: string; slug: string }>).find((a) => a.slug === "untitled-parts")?.id);
});

afterAll(async () => {
  await t.close();
});

describe("a daemon run whose records the service refuses", () => {
  it("has the failures and the error in its run record, and errors.csv among its debug files", async () => {
    const started = await t.request("GET", `/v3/automations/custom/${id}/run`);
    const run = await waitForRun(t, String(started.body.id));
    expect(run.outcome).toBe("failed");
    expect(run.failures).toEqual([{ message: TITLE, count: 2, examples: ["SKU-1", "SKU-2"] }]);
    expect(run.error).toMatchObject({ code: "records_failed", message: `2 records refused by the service: ${TITLE} (2: SKU-1, SKU-2)` });
    expect(run.debug_files).toEqual(["errors.csv", "summary.json"]);
    const errors = await t.request("GET", `/v3/automations/runs/${String(run.id)}/debug-files/errors.csv`);
    expect(errors.status).toBe(200);
    expect(errors.text).toContain(`2,SKU-1,"untitled.csv: cannot add guid ""SKU-1"": ${TITLE}"`);
    const summary = await t.request("GET", `/v3/automations/runs/${String(run.id)}/debug-files/summary.json`);
    expect(summary.body.failures).toEqual(run.failures);
    const logs = await t.request("POST", "/v3/logs", { identifier: "SKU-2", job_id: String(run.id) });
    const found = (logs.body.results as { logs: Array<{ identifier: string; result: string; message: string }> }).logs;
    expect(found.map((l) => [l.identifier, l.result])).toEqual([["SKU-2", "error"]]);
    expect(found[0]?.message).toContain(TITLE);
  });
});
