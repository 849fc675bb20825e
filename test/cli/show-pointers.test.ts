import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../src/config.js";
import { writePointers } from "../../src/pointers/index.js";
import { openStore } from "../../src/state/index.js";

/** `conveyor show` of an http import with pointers: the real CLI prints each pointer's stored and initial value. */

const dir = mkdtempSync(path.join(tmpdir(), "conveyor-show-pointers-"));
const env = { CONVEYOR_DATA_DIR: path.join(dir, "data") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const definition = {
  name: "Tracking changes",
  slug: "tracking-changes",
  active: true,
  schedule: "0 * * * *",
  type: "orders",
  action: "import",
  connection: {
    type: "http",
    address: "https://api.example.test/shipments",
    method: "GET",
    payload: {},
    pointers: { since: { from: "$.updated_at", initial: "2025-01-01T00:00:00Z" }, last_id: { from: "$.id", keep: "last" } },
  },
  file_configs: [{ jsonpath: 1, field_map: { oid: "$.order", "shipments.shiptracking": "$.tracking" }, update: true }],
};

describe("conveyor show with pointers", () => {
  it("prints the current pointers under the key the runs use, with their initial values", async () => {
    const file = path.join(dir, "tracking.json");
    writeFileSync(file, JSON.stringify(definition));
    const store = await openStore(loadSettings({ cwd: dir, env }));
    try {
      await writePointers(store, "tracking-changes", { since: "2026-01-05T08:30:00Z" });
    } finally {
      await store.close();
    }

    const text = await cli(["show", file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("pointers of tracking-changes:\n  since = 2026-01-05T08:30:00Z (initial 2025-01-01T00:00:00Z)\n  last_id = (not set)\n");

    const json = await cli(["show", file, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const shown = JSON.parse(json.stdout) as { pointers: unknown; connection: { pointers: unknown } };
    expect(shown.pointers).toEqual({ since: { value: "2026-01-05T08:30:00Z", initial: "2025-01-01T00:00:00Z" }, last_id: { value: null, initial: null } });
    expect(shown.connection.pointers).toMatchObject({ since: { from: "$.updated_at", keep: "max" } });
  }, 60_000);
});
