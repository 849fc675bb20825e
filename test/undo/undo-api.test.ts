import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";

/** `POST /v3/automations/runs/{id}/undo` on a whole daemon: queued like a run, `wait` answers with the undo's record. */
describe("the undo route", () => {
  let t: TestDaemon;
  let automation = "";
  beforeAll(async () => {
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() } });
    const list = await t.request("GET", "/v3/automations/custom");
    automation = String((list.body.automations as Array<{ id: string }>)[0]?.id);
  });
  afterAll(async () => t.close(30_000));

  it("undoes a live run, debug first, and refuses what cannot be undone", async () => {
    const run = await t.request("GET", `/v3/automations/custom/${automation}/run?wait=60`);
    const runId = String(run.body.id);
    expect(run.body.run).toMatchObject({ outcome: "success", undo: { journal: true } });

    const debug = await t.request("POST", `/v3/automations/runs/${runId}/undo?debug=1&wait=60`);
    expect(debug.status).toBe(200);
    expect(debug.body.run).toMatchObject({ outcome: "success", mode: "debug", undo_of: runId, counts: { update: 3 } });
    const plan = await t.request("GET", `/v3/automations/runs/${String(debug.body.id)}/debug-files/plan.csv`);
    expect(plan.text).toContain("update,edit,A1,stock,11,1");

    // Narrowed as conveyor undo --identifier/--field narrows it: one record, one field.
    const narrow = await t.request("POST", `/v3/automations/runs/${runId}/undo?debug=1&identifier=A1&field=stock&wait=60`);
    expect(narrow.body.run).toMatchObject({ outcome: "success", undo_of: runId, counts: { update: 1 } });
    const narrowPlan = await t.request("GET", `/v3/automations/runs/${String(narrow.body.id)}/debug-files/plan.csv`);
    expect(narrowPlan.text).toContain("update,edit,A1,stock,11,1");
    expect(narrowPlan.text).not.toMatch(/,B2,|,C3,|,cost,/);

    const live = await t.request("POST", `/v3/automations/runs/${runId}/undo?wait=60`);
    expect(live.body.run).toMatchObject({ outcome: "success", mode: "prod", undo_of: runId, conflicts: 0, counts: { update: 3 } });
    // Undone already: the service holds every value before, so a second undo has nothing to send.
    const again = await t.request("POST", `/v3/automations/runs/${runId}/undo?wait=60`);
    expect(again.body.run).toMatchObject({ outcome: "success", counts: { update: 0, unchanged: 3 } });

    expect((await t.request("POST", `/v3/automations/runs/${String(debug.body.id)}/undo`)).status).toBe(409);
    expect((await t.request("POST", "/v3/automations/runs/no-such-run/undo")).status).toBe(404);
    expect((await t.request("POST", `/v3/automations/runs/${runId}/undo?diff=1`)).status).toBe(400);
  }, 120_000);
});
