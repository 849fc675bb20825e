import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";

/**
 * `conveyor run <id>` of an installed automation: the published definition
 * from the daemon's catalogue plus the installer's values, sealed ones
 * decrypted with the data folder's key, as the daemon runs it.
 */
const SECRET = "partner-key-55443322";
let t: TestDaemon;
let id: string;

function conveyor(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/cli.ts", ...args],
      { env: { ...process.env, CONVEYOR_DATA_DIR: t.settings.dataDir, CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", ...env }, timeout: 90_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  const published = {
    ...stockDefinition({ name: "Shared stock feed", schedule: "0 4 * * *" }),
    shared_id: 4711,
    parameters: [
      { name: "warehouse", value: "default", encrypted: false },
      { name: "partner key", value: null, encrypted: true, required: false },
    ],
  };
  t = await startTestDaemon({ published: { "shared.json": published } });
  const installed = await t.request("POST", "/v3/automations/installed", {
    shared_id: 4711,
    active: true,
    parameters: [
      { name: "warehouse", value: "east", encrypted: false },
      { name: "partner key", value: SECRET, encrypted: true },
    ],
  });
  expect(installed.status, installed.text).toBe(200);
  id = String(installed.body.id);
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe("one system: conveyor run <id> of an installed automation", () => {
  it("runs the published definition with the installer's values, under the installed automation's id", async () => {
    const result = await conveyor(["run", id, "--debug", "--json"], { CONVEYOR_AUTOMATIONS: path.join(t.dir, "automations") });
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as { id: string; automation: string; outcome: string };
    expect(run).toMatchObject({ automation: id, outcome: "success" });
    // The daemon's API shows a run only to its account: the CLI ran it as the installed automation's account.
    expect((await t.request("GET", `/v3/automations/runs/${run.id}`)).body).toMatchObject({ automation: id, account: t.headers["X-Auth-User"] });
    const plan = readFileSync(path.join(t.settings.dataDir, "runs", run.id, "debug", "plan.csv"), "utf8");
    expect(plan).toContain("east");
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  }, 90_000);

  it("says where the catalogue is when the CLI is not given the daemon's automations folder", async () => {
    const result = await conveyor(["run", id, "--debug"], { CONVEYOR_AUTOMATIONS: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`automation ${id}`);
    expect(result.stderr).toContain("CONVEYOR_AUTOMATIONS");
  }, 90_000);
});
