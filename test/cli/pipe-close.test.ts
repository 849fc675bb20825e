import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emptyCounts, type RunRecord } from "../../src/state/index.js";
import { SqliteStore } from "../../src/state/sqlite.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(path.join(tmpdir(), "conveyor-pipe-"));
const dataDir = path.join(dir, "data");

const record = (id: string, started: string): RunRecord => ({
  id, automation: "stock-feed", account: "demo", mode: "debug", trigger: "manual", diff: false, force: false, notify: false, email: null,
  started, finished: started, outcome: "success", counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0, files: [],
  debug_files: ["plan.csv"], guard: null, error: null, heartbeat: null,
});

/** `conveyor <args> | head -1` under pipefail: the exit code is conveyor's unless head's fails. */
function pipedToHead(args: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CONVEYOR_DATA_DIR: dataDir };
    delete env.CONVEYOR_DATABASE_URL;
    const proc = spawn("bash", ["-o", "pipefail", "-c", `node --import tsx src/cli.ts ${args} | head -1`], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    proc.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("a printing command whose reader stops early (`| head`) ends quietly with exit 0", () => {
  beforeAll(async () => {
    const store = new SqliteStore(path.join(dataDir, "state.db"));
    // Far more than a pipe's buffer (64 KB on Linux), so conveyor is still writing when head exits.
    const plan = path.join(dir, "plan.csv");
    const rows = Array.from({ length: 200_000 }, (_, i) => `update,edit,sku-${i},stock,${i},${i + 1}`);
    writeFileSync(plan, `operation,action,identifier,field,before,after\n${rows.join("\n")}\n`);
    for (let i = 0; i < 1500; i++) await store.createRun(record(`r${String(i).padStart(5, "0")}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()));
    await store.putDebugFile("r00000", "plan.csv", plan);
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("debug-files <run> plan.csv", async () => {
    const result = await pipedToHead("debug-files r00000 plan.csv");
    expect(result).toEqual({ code: 0, stdout: "operation,action,identifier,field,before,after\n", stderr: "" });
  });

  it("runs, as a table and as JSON", async () => {
    const table = await pipedToHead("runs --limit 1500");
    expect(table).toMatchObject({ code: 0, stderr: "" });
    expect(table.stdout).toMatch(/^┌/);
    const json = await pipedToHead("runs --limit 1500 --json");
    expect(json).toMatchObject({ code: 0, stderr: "" });
    expect(json.stdout).toMatch(/^\[\{"id":"r01499"/);
  });
});
