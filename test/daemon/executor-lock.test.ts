import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdAutomation, lockHolder, type HeldLock } from "../../src/state/index.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/** The daemon's executor takes the automation's lock that `conveyor run` takes: it waits for the holder, and a cancel ends the wait. */
let t: TestDaemon;
let id: string;

beforeAll(async () => {
  t = await startTestDaemon({ definitions: { "stock.json": stockDefinition({ slug: "stock-feed" }) } });
  const list = await t.request("GET", "/v3/automations/custom");
  id = String((list.body.automations as Array<Record<string, unknown>>).find((a) => a.slug === "stock-feed")?.id);
}, 60_000);

afterAll(async () => {
  await t.close();
});

async function holdAsCli(runId: string): Promise<HeldLock> {
  const result = await holdAutomation(t.daemon.store, { automation: id, runId, holder: lockHolder("cli") });
  if ("busy" in result) throw new Error(`automation ${id} is held by ${result.busy.run_id}`);
  return result;
}

describe("daemon executor and the automation lock", () => {
  it("a run waits while a CLI run holds the automation, and a cancel while it waits records canceled", async () => {
    const cli = await holdAsCli("run-of-the-cli");
    try {
      const queued = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1`);
      const runId = String(queued.body.id);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await t.daemon.store.getRun(runId)).toBeNull();
      expect((await t.request("GET", `/v3/automations/runs/${runId}`)).body).toMatchObject({ state: "starting" });
      expect(t.daemon.queue.cancel(runId)).toBe(true);
      const run = await waitForRun(t, runId);
      expect(run).toMatchObject({ outcome: "canceled", error: expect.objectContaining({ code: "canceled" }) });
    } finally {
      await cli.release();
    }
  }, 30_000);

  it("a run that waited starts once the CLI run releases the automation", async () => {
    const cli = await holdAsCli("run-of-the-cli-2");
    const queued = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1`);
    await new Promise((r) => setTimeout(r, 1_200));
    await cli.release();
    const run = await waitForRun(t, String(queued.body.id));
    expect(run).toMatchObject({ outcome: "success", automation: id });
    // The daemon's run released the lock when it ended: the automation is free.
    const after = await holdAsCli("run-of-the-cli-3");
    await after.release();
  }, 30_000);
});
