import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgSchemas } from "../helpers/postgres.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

type Failed = { results: { failed: Record<string, { message: string; code: number }> } };

function failure(body: Record<string, unknown>): string {
  return (body as unknown as Failed).results.failed["0"]?.message ?? "";
}

const pgs = new PgSchemas();
afterAll(async () => pgs.end());

/** Strict run flags and `?wait=` on both state stores: one SQLite file, or PostgreSQL as a cluster uses it. */
describe.each(["sqlite", "postgres"] as const)("run flags and wait on %s", (kind) => {
  let t: TestDaemon;
  let id = "";
  let installed = "";

  beforeAll(async () => {
    const env: Record<string, string> = kind === "postgres" ? { CONVEYOR_DATABASE_URL: pgs.url() } : {};
    const published = { ...stockDefinition({ name: "Shared stock feed" }), shared_id: 4711 };
    t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, published: { "shared.json": published }, env });
    const list = await t.request("GET", "/v3/automations/custom");
    id = String((list.body.automations as Array<{ id: string }>)[0]?.id);
    const install = await t.request("POST", "/v3/automations/installed", { shared_id: 4711, active: false, parameters: [{ name: "warehouse", value: "main", encrypted: false }] });
    installed = String(install.body.id);
  });
  afterAll(async () => t.close());

  const refused: Array<[string, string, RegExp]> = [
    ["debug=maybe", "debug", /debug must be 1, 0, true or false, not "maybe"/],
    ["debug=", "debug", /debug must be 1, 0, true or false, not an empty value/],
    ["force=yes%20please", "force", /force must be 1, 0, true or false, not "yes please"/],
    ["debug=1&diff=on", "diff", /diff must be 1, 0, true or false, not "on"/],
    ["debug=1&notify=no", "notify", /notify must be 1, 0, true or false, not "no"/],
    ["debug=1&debug=0", "debug", /debug is given 2 times; give it once/],
    ["debug=1&wait=0", "wait", /wait must be a whole number of seconds from 1 to 600, not "0"/],
    ["debug=1&wait=601", "wait", /from 1 to 600, not "601"/],
    ["debug=1&wait=1.5", "wait", /from 1 to 600, not "1.5"/],
    ["debug=1&wait=", "wait", /from 1 to 600, not an empty value/],
  ];

  it.each(refused)("refuses ?%s with a 400 naming %s and the allowed values", async (q, name, message) => {
    for (const route of [`custom/${id}`, `installed/${installed}`]) {
      const res = await t.request("GET", `/v3/automations/${route}/run?${q}`);
      expect(res.status).toBe(400);
      expect(failure(res.body)).toMatch(message);
      expect(failure(res.body)).toContain(name);
    }
  });

  it("ran nothing for the refused requests: no run record, nothing queued, the status untouched", async () => {
    expect(t.daemon.queue.list()).toEqual([]);
    const runs = await t.request("GET", "/v3/automations/runs");
    expect(runs.body.runs).toEqual([]);
    for (const route of [`custom/${id}`, `installed/${installed}`]) {
      const status = await t.request("GET", `/v3/automations/${route}`);
      expect(status.body.status, route).toMatchObject({ last_run_id: null, last_run_success_prod: null, last_run_success_debug: null });
    }
  });

  it("refuses a bad flag on the listings and the fetch too, which accept the flags (seed part 7)", async () => {
    for (const url of ["/v3/automations/custom?debug=maybe", "/v3/automations/installed?notify=yes", "/v3/automations/published?diff=", `/v3/automations/custom/${id}?debug=2`]) {
      const res = await t.request("GET", url);
      expect(res.status, url).toBe(400);
      expect(failure(res.body), url).toContain("1, 0, true or false");
    }
    expect((await t.request("GET", "/v3/automations/custom?debug=1&diff=false&notify=TRUE")).status).toBe(200);
  });

  it("refuses a body flag that is not a boolean instead of reading it as false, and changes nothing", async () => {
    const install = await t.request("POST", "/v3/automations/installed", { shared_id: 4711, active: "maybe", parameters: [{ name: "warehouse", value: "x", encrypted: "yes" }] });
    expect(install.status).toBe(400);
    const messages = Object.values((install.body as unknown as Failed).results.failed).map((f) => f.message).join("\n");
    expect(messages).toMatch(/active: "maybe" is not a boolean.*true, false, 1 or 0/);
    expect(messages).toMatch(/parameters\[0\]\.encrypted: "yes" is not a boolean/);
    expect((await t.request("GET", "/v3/automations/installed")).body.count).toBe("1");

    const patch = await t.request("PATCH", `/v3/automations/installed/${installed}`, { active: "on" });
    expect(patch.status).toBe(400);
    expect(failure(patch.body)).toContain("active");
    for (const route of [`custom/${id}`, `installed/${installed}`]) {
      const put = await t.request("PUT", `/v3/automations/${route}/parameters/warehouse`, { value: "secret-ish", encrypted: "yes" });
      expect(put.status, route).toBe(400);
      expect(failure(put.body), route).toMatch(/encrypted: "yes" is not a boolean/);
    }
    const fetched = await t.request("GET", `/v3/automations/installed/${installed}`);
    expect(fetched.body.automation).toMatchObject({ active: false });
    const ok = await t.request("PUT", `/v3/automations/installed/${installed}/parameters/warehouse`, { value: "main", encrypted: "false" });
    expect(ok.status).toBe(200);
  });

  it("?debug=1&wait=30 answers when the run has ended, with the record GET /v3/automations/runs/{id} gives", async () => {
    const res = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1&diff=0&wait=30`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: expect.any(String), result: "success", state: "finished" });
    expect(res.body.message).toMatch(/debug run of automation .* finished: success/);
    const record = await t.request("GET", `/v3/automations/runs/${String(res.body.id)}`);
    expect(res.body.run).toEqual(record.body);
    expect(record.body).toMatchObject({ mode: "debug", trigger: "api", outcome: "success", state: "finished" });
  });

  it("accepts true/false in any case and answers without wait in the seed's shape", async () => {
    const res = await t.request("GET", `/v3/automations/custom/${id}/run?debug=True&diff=false&force=0&notify=FALSE`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(String), message: expect.any(String), result: "success" });
    const run = await waitForRun(t, String(res.body.id));
    expect(run).toMatchObject({ mode: "debug", diff: false, force: false, notify: false });
  });
});
