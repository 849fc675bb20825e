import { execFile } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgSchemas } from "../helpers/postgres.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

/*
 * Two daemons, two data folders, one PostgreSQL schema: what one is told, the
 * other answers the same (automations, accounts, run records, logs, debug
 * files), which is what lets a load balancer send any request to either.
 */
const pgs = new PgSchemas();
const KEY = "7".repeat(64);
let url: string;
let a: TestDaemon;
let b: TestDaemon;

beforeAll(async () => {
  url = pgs.url();
  const env = { CONVEYOR_DATABASE_URL: url, CONVEYOR_API_USER: "demo", CONVEYOR_API_TOKEN: "shared-demo-token-123", CONVEYOR_SECRET_KEY: KEY };
  a = await startTestDaemon({ env, definitions: { "stock.json": stockDefinition() } });
  b = await startTestDaemon({ env, definitions: { "stock.json": stockDefinition() } });
}, 60_000);
afterAll(async () => {
  await a.close();
  await b.close();
  await pgs.end();
});

describe("two daemons on one PostgreSQL", () => {
  it("load the same definitions folder once, and list the same automations", async () => {
    const fromA = await a.request("GET", "/v3/automations/custom");
    const fromB = await b.request("GET", "/v3/automations/custom");
    expect(fromA.status).toBe(200);
    expect((fromA.body.automations as unknown[]).length).toBe(1);
    expect(fromB.body.automations).toEqual(fromA.body.automations);
  });

  it("an automation created on one is fetched, changed and deleted on the other", async () => {
    const created = await a.request("POST", "/v3/automations/custom", stockDefinition({ name: "Second feed", active: false }));
    const id = String(created.body.id);
    const fetched = await b.request("GET", `/v3/automations/custom/${id}`);
    expect(fetched.status).toBe(200);
    expect((fetched.body.automation as { name: string }).name).toBe("Second feed");
    expect((await b.request("PATCH", `/v3/automations/custom/${id}`, { vendor: "Shared Ltd" })).status).toBe(200);
    expect(((await a.request("GET", `/v3/automations/custom/${id}`)).body.automation as { vendor: string }).vendor).toBe("Shared Ltd");
    expect((await b.request("DELETE", `/v3/automations/custom/${id}`)).status).toBe(200);
    expect((await a.request("GET", `/v3/automations/custom/${id}`)).status).toBe(404);
  });

  it("an account added on one daemon is let in by the other", async () => {
    const token = await a.daemon.accounts.add("partner", undefined, "test");
    const headers = { "X-Auth-User": "partner", "X-Auth-Token": token };
    expect((await b.request("GET", "/v3/automations/custom", undefined, headers)).status).toBe(200);
    await b.daemon.accounts.remove("partner");
    expect((await a.request("GET", "/v3/automations/custom", undefined, headers)).status).toBe(401);
  });

  it("a debug run's record and debug files are served by the daemon that did not run it, and by the CLI", async () => {
    const list = await a.request("GET", "/v3/automations/custom");
    const stock = (list.body.automations as Array<{ id: string; slug: string }>).find((x) => x.slug === "stock-feed");
    const queued = await a.request("GET", `/v3/automations/custom/${String(stock?.id)}/run?debug=1&diff=0`);
    const runId = String(queued.body.id);
    const run = await waitForRun(b, runId);
    expect(run).toMatchObject({ mode: "debug", outcome: "success" });
    // Each daemon wrote only its own folder; whichever ran it, the other has no local copy.
    const local = [a, b].filter((t) => existsSync(path.join(t.settings.dataDir, "runs", runId, "debug", "plan.csv")));
    expect(local).toHaveLength(1);
    const other = local[0] === a ? b : a;
    const names = await other.request("GET", `/v3/automations/runs/${runId}/debug-files`);
    expect(names.body.debug_files).toEqual(expect.arrayContaining(["plan.csv", "records.csv", "summary.json"]));
    const plan = await other.request("GET", `/v3/automations/runs/${runId}/debug-files/plan.csv`);
    expect(plan.status).toBe(200);
    expect(plan.headers.get("content-type")).toContain("text/csv");
    expect(plan.text).toContain("update,edit,A1,stock,1,11");
    const same = await (local[0] as TestDaemon).request("GET", `/v3/automations/runs/${runId}/debug-files/plan.csv`);
    expect(same.text).toBe(plan.text);
    expect((await other.request("GET", `/v3/automations/runs/${runId}/debug-files/nothing.csv`)).status).toBe(404);
    // The CLI on a machine with no run folders at all reads the same file from the database.
    const cli = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli.ts", "debug-files", runId, "plan.csv"], {
      cwd: path.resolve(import.meta.dirname, "../.."),
      env: { ...process.env, CONVEYOR_DATA_DIR: mkdtempSync(path.join(tmpdir(), "conveyor-cli-")), CONVEYOR_DATABASE_URL: url, CONVEYOR_SECRET_KEY: KEY },
    });
    expect(cli.stdout).toBe(plan.text);
    const status = await other.request("GET", `/v3/automations/custom/${String(stock?.id)}`);
    expect(status.body.status).toMatchObject({ last_run_id: runId, last_run_success_debug: true });
  }, 30_000);

  it("a live run's log records are searched through either daemon", async () => {
    const list = await b.request("GET", "/v3/automations/custom");
    const stock = (list.body.automations as Array<{ id: string; slug: string }>).find((x) => x.slug === "stock-feed");
    const queued = await b.request("GET", `/v3/automations/custom/${String(stock?.id)}/run`);
    const runId = String(queued.body.id);
    expect(await waitForRun(a, runId)).toMatchObject({ mode: "prod", outcome: "success" });
    for (const t of [a, b]) {
      const logs = await t.request("POST", "/v3/logs", { identifier: "A1,B2", job_id: runId });
      expect((logs.body.results as { found: number }).found).toBe(2);
    }
    const runs = await a.request("GET", `/v3/automations/runs?automation=${String(stock?.id)}`);
    expect((runs.body.runs as Array<{ id: string }>).map((r) => r.id)).toContain(runId);
  });

  it("a daemon started with another secret key stops with the reason instead of failing on every token", async () => {
    const env = { CONVEYOR_DATABASE_URL: url, CONVEYOR_API_USER: "demo", CONVEYOR_API_TOKEN: "shared-demo-token-123", CONVEYOR_SECRET_KEY: "8".repeat(64) };
    await expect(startTestDaemon({ env })).rejects.toThrow(/secret key is not the one the shared database was written with/);
  });
});
