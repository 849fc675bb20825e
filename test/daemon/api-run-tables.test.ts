import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgSchemas } from "../helpers/postgres.js";
import { FEED_CSV, startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/** Each bulk row takes 0.6 s in the embedded service: a live run of the three-row feed stays in `apply` for seconds. */
const SLOW = { bulkBatchRows: 1, bulkBatchDelayMs: 600 };

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

describe.each(["sqlite", "postgres"] as const)("plan, errors and progress routes on %s", (kind) => {
  let t: TestDaemon;
  let id = "";
  let copies: string[] = [];
  const feed = (text: string): void => {
    for (const copy of copies) writeFileSync(path.join(t.settings.storage, copy), text);
  };

  beforeAll(async () => {
    const env: Record<string, string> = kind === "postgres" ? { CONVEYOR_DATABASE_URL: pgs.url() } : {};
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, env, daemon: { embedded: SLOW } });
    // A row without a SKU is a row error: errors.csv gets a line.
    // The samples' storage was copied into the account's folder of the service's storage at start.
    copies = readdirSync(t.settings.storage, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(path.join("feeds", "stock.csv")));
    expect(copies.length).toBeGreaterThan(0);
    feed(`${FEED_CSV}\n,44,4.40\n`);
    const list = await t.request("GET", "/v3/automations/custom");
    id = String((list.body.automations as Array<{ id: string }>)[0]?.id);
  }, 60_000);
  afterAll(async () => t.close(30_000));

  it("GET …/plan pages a debug run's planned changes with before and after, filtered, and counts its actions", async () => {
    const queued = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1&diff=0`);
    const runId = String(queued.body.id);
    await waitForRun(t, runId, 30_000);
    const plan = await t.request("GET", `/v3/automations/runs/${runId}/plan`);
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ page: 1, pages: 1, more: false, cut_off: false, actions: { edit: expect.any(Number) } });
    const rows = plan.body.rows as Array<Record<string, unknown>>;
    expect(plan.body.total).toBe(rows.length);
    expect(rows).toContainEqual(expect.objectContaining({ line: expect.any(Number), operation: "update", action: "edit", identifier: "A1", field: "stock", before: "1", after: "11", change: "changed" }));
    const byField = await t.request("GET", `/v3/automations/runs/${runId}/plan?field=stock`);
    expect((byField.body.rows as Array<{ field: string }>).map((r) => r.field)).toEqual(["stock", "stock", "stock"]);
    expect(byField.body.total).toBe(3);
    const byId = await t.request("GET", `/v3/automations/runs/${runId}/plan?identifier=B*`);
    expect(new Set((byId.body.rows as Array<{ identifier: string }>).map((r) => r.identifier))).toEqual(new Set(["B2"]));
    expect(byId.body.total).toBe((byId.body.rows as unknown[]).length);
    const none = await t.request("GET", `/v3/automations/runs/${runId}/plan?action=delete`);
    expect(none.body).toMatchObject({ total: 0, pages: 1, rows: [] });

    const errors = await t.request("GET", `/v3/automations/runs/${runId}/errors`);
    expect(errors.status, errors.text + JSON.stringify(await t.request("GET", `/v3/automations/runs/${runId}`))).toBe(200);
    expect(errors.body).toMatchObject({ total: 1, rows: [{ row: 1, line: 5, identifier: "", message: expect.any(String) }] });

    expect((await t.request("GET", `/v3/automations/runs/${runId}/plan?page=2`)).status).toBe(400);
    const unknown = await t.request("GET", `/v3/automations/runs/${runId}/plan?sort=field`);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("valid parameters: page, action, field, identifier");
    expect((await t.request("GET", `/v3/automations/runs/${runId}/plan?page=zero`)).status).toBe(400);
  }, 60_000);

  it("another account gets a 404 for the run's plan and errors, as for the run", async () => {
    const queued = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1&diff=0`);
    const runId = String(queued.body.id);
    await waitForRun(t, runId, 30_000);
    const token = await t.daemon.accounts.add(`other-${kind}`, undefined, "test");
    const other = { "X-Auth-User": `other-${kind}`, "X-Auth-Token": token };
    for (const route of ["", "/plan", "/errors", "/plan?field=stock"]) {
      const res = await t.request("GET", `/v3/automations/runs/${runId}${route}`, undefined, other);
      expect(res.status, route).toBe(404);
      expect(res.text).not.toContain("A1");
    }
    expect((await t.request("GET", `/v3/automations/runs/${runId}/plan`, undefined, {})).status).toBe(401);
  }, 60_000);

  it("a live run shows its stage, rows and bulk files in GET …/runs/{id} while it runs, and not once it finished", async () => {
    // Without the bad row, which would stop the run at error_limit before it applies.
    feed(FEED_CSV);
    const queued = await t.request("GET", `/v3/automations/custom/${id}/run?diff=0`);
    const runId = String(queued.body.id);
    let seen: Record<string, unknown> | null = null;
    const until = Date.now() + 20_000;
    while (!seen && Date.now() < until) {
      const res = await t.request("GET", `/v3/automations/runs/${runId}`);
      const progress = res.body.progress as Record<string, unknown> | undefined;
      if (res.body.state === "running" && progress?.stage === "apply") seen = progress;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toMatchObject({ stage: "apply", rows: 3, files: { done: expect.any(Number), total: expect.any(Number) }, rate: expect.any(Number), at: expect.any(String) });
    const done = await waitForRun(t, runId, 30_000);
    expect(done.outcome).toBe("success");
    expect(done.progress).toBeUndefined();
  }, 60_000);
});
