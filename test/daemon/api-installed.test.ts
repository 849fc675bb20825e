import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

const SECRET = "partner-key-99887766";

function published(): Record<string, unknown> {
  return {
    ...stockDefinition({ name: "Shared stock feed", description: "A shared stock import", schedule: "0 4 * * *" }),
    shared_id: 4711,
    logo: "https://cdn.example/logo.png",
    readme: "Install, set the warehouse.",
    parameters: [
      { name: "warehouse", value: "default", description: "warehouse label", encrypted: false },
      { name: "partner key", value: null, description: "key from the partner", encrypted: true, required: false },
      { name: "internal url", value: "https://internal.example/x", hidden_from_user: true, required: false },
    ],
  };
}

let t: TestDaemon;
let installedId: number;

beforeAll(async () => {
  t = await startTestDaemon({ published: { "shared.json": published() } });
});
afterAll(async () => t.close());

describe("published and installed automations (seed part 4.2)", () => {
  it("lists the published catalogue in the seed's shape: parameters keyed by name, numbers for flags", async () => {
    const res = await t.request("GET", "/v3/automations/published");
    expect(res.status).toBe(200);
    expect(res.body.count).toBe("1");
    const [p] = res.body.automations as Array<Record<string, unknown>>;
    expect(p).toMatchObject({ id: 4711, shared_id: "4711", shared: true, logo: "https://cdn.example/logo.png", readme: "Install, set the warehouse.", description: "A shared stock import", action: "import", type: "products" });
    expect(p?.parameters).toEqual({
      warehouse: { description: "warehouse label", encrypted: 0, hidden_from_user: 0, value: "default" },
      "partner key": { description: "key from the partner", encrypted: 1, hidden_from_user: 0, value: null },
      "internal url": { description: "", encrypted: 0, hidden_from_user: 1, value: null },
    });
    expect(typeof p?.connection).toBe("object");
    expect((await t.request("GET", "/v3/automations/published?foo=1")).status).toBe(400);
  });

  it("refuses an install body with every problem at once", async () => {
    const res = await t.request("POST", "/v3/automations/installed", { shared_id: 1, parameters: [{ name: "warehouse" }, { name: "nope", value: "x", encrypted: false }] });
    expect(res.status).toBe(400);
    const messages = Object.values((res.body.results as { failed: Record<string, { message: string }> }).failed).map((f) => f.message).join("\n");
    expect(messages).toContain("shared_id");
    expect(messages).toContain("active");
    expect(messages).toContain("parameters[0].value");
    expect(messages).toContain("parameters[0].encrypted");
  });

  it("installs: 200 {id:number, code 1}; the installer's values, the secret encrypted and masked", async () => {
    const res = await t.request("POST", "/v3/automations/installed", {
      shared_id: 4711,
      active: true,
      parameters: [
        { name: "warehouse", value: "east", encrypted: false },
        { name: "partner key", value: SECRET, encrypted: true },
      ],
    });
    expect(res.status).toBe(200);
    expect(typeof res.body.id).toBe("number");
    expect((res.body.results as { successful: Array<{ code: number }> }).successful[0]?.code).toBe(1);
    installedId = res.body.id as number;
    const list = await t.request("GET", "/v3/automations/installed");
    const [a] = list.body.automations as Array<Record<string, unknown>>;
    expect(a).toMatchObject({ id: String(installedId), shared_id: "4711", active: true, name: "Shared stock feed", user_id: "demo" });
    expect(a?.parameters).toEqual([
      { description: "warehouse label", encrypted: 0, name: "warehouse", value: "east" },
      { description: "key from the partner", encrypted: 1, name: "partner key", value: "********" },
    ]);
    expect(list.text).not.toContain(SECRET);
    expect(list.text).not.toContain("internal.example");
  });

  it("keeps slugs unique across custom and installed automations of the account", async () => {
    const one = await t.request("GET", `/v3/automations/installed/${installedId}`);
    const slug = String((one.body.automation as Record<string, unknown>).slug);
    expect(slug).not.toBe("undefined");
    const clash = await t.request("POST", "/v3/automations/custom", stockDefinition({ slug }));
    expect(clash.status).toBeGreaterThanOrEqual(400);
    expect(clash.text).toContain(`\\"${slug}\\" is already the slug of another automation of this account`);
    const named = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Shared stock feed" }));
    expect(named.status).toBe(200);
    const created = await t.request("GET", `/v3/automations/custom/${String(named.body.id)}`);
    expect((created.body.automation as Record<string, unknown>).slug).not.toBe(slug);
    await t.request("DELETE", `/v3/automations/custom/${String(named.body.id)}`);
  });

  it("fetches one: {automation, status, timestamp}; installed status carries timestamp strings", async () => {
    const run = await t.request("GET", `/v3/automations/installed/${installedId}/run`);
    expect(run.body).toEqual({ id: expect.any(String), message: expect.any(String), result: "success" });
    const record = await waitForRun(t, String(run.body.id));
    expect(record.outcome).toBe("success");
    const res = await t.request("GET", `/v3/automations/installed/${installedId}`);
    const status = res.body.status as Record<string, unknown>;
    expect(status.last_run_start_prod).toBe(record.started);
    expect(status.last_run_finish_prod).toBe(record.finished);
    expect(status.last_run_success_prod).toBe(true);
    // The run used the installer's value in the published configuration.
    const item = await fetch(`${t.daemon.embedded?.url ?? ""}/v1/editor/items/edit?guid=g-A1`, { headers: t.headers });
    expect(await item.json()).toMatchObject({ stock: "11", warehouse: "east" });
  });

  it("updates {active, parameters}: code 2; PUT one parameter: code 2; a key of the configuration is refused", async () => {
    const patch = await t.request("PATCH", `/v3/automations/installed/${installedId}`, { active: false, parameters: [{ name: "warehouse", value: "west", encrypted: false }] });
    expect(patch.body).toEqual({ id: String(installedId), results: { successful: [{ code: 2, message: expect.any(String) }] } });
    const put = await t.request("PUT", `/v3/automations/installed/${installedId}/parameters/warehouse`, { encrypted: false, value: "north" });
    expect((put.body.results as { successful: Array<{ code: number }> }).successful[0]?.code).toBe(2);
    expect((await t.request("PUT", `/v3/automations/installed/${installedId}/parameters/unknown`, { encrypted: false, value: "x" })).status).toBe(404);
    expect((await t.request("PATCH", `/v3/automations/installed/${installedId}`, { file_configs: [] })).status).toBe(400);
    const res = await t.request("GET", `/v3/automations/installed/${installedId}`);
    expect(res.body.automation).toMatchObject({ active: false, parameters: expect.arrayContaining([expect.objectContaining({ name: "warehouse", value: "north" })]) });
  });

  it("resets the status (code 3) and deletes (code 3)", async () => {
    const reset = await t.request("DELETE", `/v3/automations/installed/${installedId}/status?type=prod`);
    expect((reset.body.results as { successful: Array<{ code: number }> }).successful[0]?.code).toBe(3);
    expect((await t.request("DELETE", `/v3/automations/installed/${installedId}/status?type=both`)).status).toBe(400);
    const del = await t.request("DELETE", `/v3/automations/installed/${installedId}`);
    expect(del.body).toEqual({ id: String(installedId), results: { successful: [{ code: 3, message: expect.any(String) }] } });
    expect((await t.request("GET", `/v3/automations/installed/${installedId}`)).status).toBe(404);
  });
});

describe("accounts", () => {
  it("each account sees only its own automations, runs and logs", async () => {
    const token = await t.daemon.accounts.add("second", undefined, "test");
    const other = { "X-Auth-User": "second", "X-Auth-Token": token };
    const created = await t.request("POST", "/v3/automations/custom", stockDefinition({ name: "Second's feed" }), other);
    expect(created.status).toBe(200);
    const mine = await t.request("GET", "/v3/automations/custom");
    expect((mine.body.automations as Array<{ name: string }>).map((a) => a.name)).not.toContain("Second's feed");
    const theirs = await t.request("GET", "/v3/automations/custom", undefined, other);
    expect((theirs.body.automations as Array<{ name: string }>).map((a) => a.name)).toEqual(["Second's feed"]);
    expect((await t.request("GET", `/v3/automations/custom/${String(created.body.id)}`)).status).toBe(404);
    expect((await t.request("DELETE", `/v3/automations/custom/${String(created.body.id)}`)).status).toBe(404);
    const runs = await t.request("GET", "/v3/automations/runs", undefined, other);
    expect(runs.body.runs).toEqual([]);
    await t.daemon.accounts.remove("second");
    expect((await t.request("GET", "/v3/automations/custom", undefined, other)).status).toBe(401);
  });

  it("answers the probes and the Prometheus metrics without credentials", async () => {
    expect((await t.request("GET", "/healthz", undefined, {})).status).toBe(200);
    expect((await t.request("GET", "/readyz", undefined, {})).status).toBe(200);
    const metrics = await t.request("GET", "/metrics", undefined, {});
    expect(metrics.headers.get("content-type")).toContain("text/plain");
    expect(metrics.text).toMatch(/conveyor_runs_total\{outcome="success",mode="prod"\} 1/);
    expect(metrics.text).toContain("conveyor_run_duration_seconds_count 1");
    expect(metrics.text).toMatch(/conveyor_run_rows_total\{mode="prod"\} 3/);
    expect(metrics.text).toMatch(/conveyor_api_requests_total\{method="GET",code="200"\} \d+/);
    expect(metrics.text).toContain('conveyor_queue_depth{state="waiting"} 0');
    expect(metrics.text).toMatch(/conveyor_next_run_seconds\{automation="\d+"\} \d+/);
  });
});
