import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SLOW = { embedded: { bulkBatchRows: 1, bulkBatchDelayMs: 600 } };
const open: TestDaemon[] = [];

afterEach(async () => {
  for (const t of open.splice(0)) await t.close(1_000).catch(() => undefined);
});

async function slowDaemon(): Promise<{ t: TestDaemon; id: string }> {
  const t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() }, daemon: SLOW });
  open.push(t);
  const list = await t.request("GET", "/v3/automations/custom");
  return { t, id: (list.body.automations as Array<{ id: string }>)[0]?.id ?? "" };
}

async function untilRunning(t: TestDaemon, runId: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const res = await t.request("GET", `/v3/automations/runs/${runId}`);
    if (res.body.state === "running") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} never started`);
}

async function item(t: TestDaemon, guid: string): Promise<Record<string, string>> {
  const res = await fetch(`${t.daemon.embedded?.url ?? ""}/v1/editor/items/edit?guid=${guid}`, { headers: t.headers });
  return (await res.json()) as Record<string, string>;
}

describe("daemon lifecycle with real runs", () => {
  it("graceful shutdown lets the run in flight finish", async () => {
    const { t, id } = await slowDaemon();
    const res = await t.request("GET", `/v3/automations/custom/${id}/run`);
    await untilRunning(t, String(res.body.id));
    const result = await t.daemon.shutdown(30_000);
    expect(result).toMatchObject({ finished: 1, canceled: 0, stuck: [] });
    const { openStore } = await import("../../src/state/index.js");
    const store = await openStore(t.settings);
    expect((await store.getRun(String(res.body.id)))?.outcome).toBe("success");
    await store.close();
  }, 60_000);

  it("a grace period that runs out cancels the run; nothing is left half-recorded", async () => {
    const { t, id } = await slowDaemon();
    const res = await t.request("GET", `/v3/automations/custom/${id}/run`);
    await untilRunning(t, String(res.body.id));
    const result = await t.daemon.shutdown(100);
    expect(result.canceled).toBe(1);
    expect(result.stuck).toEqual([]);
    const { openStore } = await import("../../src/state/index.js");
    const store = await openStore(t.settings);
    const run = await store.getRun(String(res.body.id));
    expect(run?.outcome).toBe("canceled");
    expect(run?.finished).not.toBeNull();
    await store.close();
  }, 60_000);

  it("an edit while a run is in flight changes the next run, not the running one", async () => {
    const { t, id } = await slowDaemon();
    const first = await t.request("GET", `/v3/automations/custom/${id}/run`);
    await untilRunning(t, String(first.body.id));
    const patch = await t.request("PUT", `/v3/automations/custom/${id}/parameters/warehouse`, { encrypted: false, value: "edited" });
    expect(patch.status).toBe(200);
    expect((await waitForRun(t, String(first.body.id))).outcome).toBe("success");
    expect((await item(t, "g-A1")).warehouse).toBe("main");
    const second = await t.request("GET", `/v3/automations/custom/${id}/run`);
    expect((await waitForRun(t, String(second.body.id))).outcome).toBe("success");
    expect((await item(t, "g-A1")).warehouse).toBe("edited");
  }, 60_000);

  it("a daemon killed mid-run: at restart the run is marked interrupted and the next run does the work", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-crash-"));
    try {
      const proc = spawn(process.execPath, ["--import", "tsx", "test/daemon/fixtures/daemon-child.ts"], { cwd: ROOT, env: { ...process.env, DAEMON_DIR: dir }, stdio: ["ignore", "pipe", "inherit"] });
      const exited = new Promise((resolve) => proc.on("exit", resolve));
      const line = await new Promise<string>((resolve) => createInterface({ input: proc.stdout }).once("line", resolve));
      const { url, headers } = JSON.parse(line) as { url: string; headers: Record<string, string> };
      const list = (await (await fetch(`${url}/v3/automations/custom`, { headers })).json()) as { automations: Array<{ id: string }> };
      const key = list.automations[0]?.id ?? "";
      const queued = (await (await fetch(`${url}/v3/automations/custom/${key}/run`, { headers })).json()) as { id: string };
      for (let i = 0; i < 200; i++) {
        const run = (await (await fetch(`${url}/v3/automations/runs/${queued.id}`, { headers })).json()) as { state?: string };
        if (run.state === "running") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // The bulk job takes 2 s a row: half a second in, the run is surely applying.
      await new Promise((r) => setTimeout(r, 500));
      proc.kill("SIGKILL");
      await exited;

      const t = await startTestDaemon({ dir, definitions: { "stock.json": stockDefinition() }, daemon: { sweepStaleMs: 0 } });
      open.push(t);
      const until = Date.now() + 10_000;
      let record: Record<string, unknown> = {};
      while (Date.now() < until) {
        record = (await t.request("GET", `/v3/automations/runs/${queued.id}`)).body;
        if (record.state === "finished") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(record).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
      const list2 = await t.request("GET", "/v3/automations/custom");
      expect(list2.body.count).toBe("1");
      const again = await t.request("GET", `/v3/automations/custom/${key}/run`);
      expect((await waitForRun(t, String(again.body.id))).outcome).toBe("success");
      expect((await item(t, "g-C3")).stock).toBe("33");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
