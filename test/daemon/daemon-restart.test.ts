import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { RunRecorder } from "../../src/pipeline/recorder.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { startTestDaemon, stockDefinition, waitForRun, type TestDaemon } from "./daemon-harness.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
const dirs: string[] = [];
const open: TestDaemon[] = [];

afterEach(async () => {
  for (const t of open.splice(0)) await t.close(1_000).catch(() => undefined);
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Child {
  proc: ChildProcess;
  exited: Promise<unknown>;
  /** The child's line once its daemon is up: the API's URL and the embedded account's headers. */
  up: Promise<{ url: string; headers: Record<string, string> }>;
}

/** A daemon in its own process on `dir` (fixtures/daemon-child.ts), so the test can kill it with SIGKILL. */
function spawnDaemon(dir: string, env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", "test/daemon/fixtures/daemon-child.ts"], { cwd: ROOT, env: { ...process.env, DAEMON_DIR: dir, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  children.push(proc);
  const exited = new Promise((resolve) => proc.on("exit", resolve));
  const up = new Promise<string>((resolve) => createInterface({ input: proc.stdout ?? process.stdin }).once("line", resolve)).then((line) => JSON.parse(line) as { url: string; headers: Record<string, string> });
  return { proc, exited, up };
}

/** A port the OS just handed out and released: the restarted daemon listens there, so /readyz is polled before its first line. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function getJson(url: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  return (await (await fetch(url, { headers })).json()) as Record<string, unknown>;
}

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

describe("a SQLite daemon's queue across restarts", () => {
  it("after kill -9 the run in flight is interrupted before /readyz says ready, and the waiting run runs under its id", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-restart-"));
    dirs.push(dir);
    const first = spawnDaemon(dir);
    const { url, headers } = await first.up;
    const list = await getJson(`${url}/v3/automations/custom`, headers);
    const key = (list.automations as Array<{ id: string }>)[0]?.id ?? "";
    const inflight = String((await getJson(`${url}/v3/automations/custom/${key}/run`, headers)).id);
    await until("the first run starting", async () => ((await getJson(`${url}/v3/automations/runs/${inflight}`, headers)).state === "running" ? true : null));
    const queued = String((await getJson(`${url}/v3/automations/custom/${key}/run?debug=1`, headers)).id);
    expect(await getJson(`${url}/v3/automations/runs/${queued}`, headers)).toMatchObject({ id: queued, state: "queued" });
    // Each bulk row takes 2 s: the first run is surely still applying.
    await new Promise((r) => setTimeout(r, 500));
    first.proc.kill("SIGKILL");
    await first.exited;

    // A CLI run on the same state file, alive (fresh heartbeat) while the daemon restarts: not the daemon's to mark.
    const store = new SqliteStore(path.join(dir, "data", "state.db"));
    const cli = await RunRecorder.start(store, { id: "r-cli-alive", automation: key, account: "cli", mode: "prod", trigger: "manual", diff: true, force: false, notify: false, email: null });
    const work = path.join(dir, "data", "runs", inflight, "work");
    try {
      expect((await store.getRun(inflight))?.outcome).toBeNull();
      // The killed run left its bulk files, the values it was sending, in its work folder.
      expect(existsSync(work)).toBe(true);
      const port = await freePort();
      const second = spawnDaemon(dir, { DAEMON_LISTEN: `127.0.0.1:${port}`, DAEMON_BULK_DELAY_MS: "0" });
      const readyz = `http://127.0.0.1:${port}/readyz`;
      const atReady = await until("/readyz answering 200", async () => {
        const status = await fetch(readyz).then((res) => res.status, () => 0);
        // Read the instant the first 200 arrives: recovery must already have written the record.
        return status === 200 ? await store.getRun(inflight) : null;
      });
      expect(atReady).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });

      const restarted = await second.up;
      const done = await until("the queued run finishing", async () => {
        const run = await getJson(`${restarted.url}/v3/automations/runs/${queued}`, restarted.headers);
        return run.state === "finished" ? run : null;
      });
      expect(done).toMatchObject({ id: queued, mode: "debug", state: "finished", outcome: "success" });
      expect(await getJson(`${restarted.url}/v3/automations/runs/${inflight}`, restarted.headers)).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
      expect(existsSync(work)).toBe(false);
      expect(await store.getRun("r-cli-alive")).toMatchObject({ outcome: null, finished: null });
      second.proc.kill("SIGKILL");
      await second.exited;
    } finally {
      await cli.finish("success");
      await store.close();
    }
  }, 120_000);

  it("a graceful stop keeps the waiting run queued; the next start runs it under the same id", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-restart-"));
    dirs.push(dir);
    const slow = await startTestDaemon({ dir, definitions: { "stock.json": stockDefinition() }, daemon: { embedded: { bulkBatchRows: 1, bulkBatchDelayMs: 300 } } });
    const list = await slow.request("GET", "/v3/automations/custom");
    const key = (list.body.automations as Array<{ id: string }>)[0]?.id ?? "";
    const running = String((await slow.request("GET", `/v3/automations/custom/${key}/run`)).body.id);
    await until("the first run starting", async () => ((await slow.request("GET", `/v3/automations/runs/${running}`)).body.state === "running" ? true : null));
    const waiting = String((await slow.request("GET", `/v3/automations/custom/${key}/run?debug=1`)).body.id);
    const result = await slow.daemon.shutdown(30_000);
    expect(result).toMatchObject({ finished: 1, canceled: 0, stuck: [], kept: 1 });

    const t = await startTestDaemon({ dir, definitions: { "stock.json": stockDefinition() } });
    open.push(t);
    expect(await waitForRun(t, running)).toMatchObject({ outcome: "success" });
    expect(await waitForRun(t, waiting)).toMatchObject({ id: waiting, mode: "debug", outcome: "success" });
  }, 90_000);
});
