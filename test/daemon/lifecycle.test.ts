import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { installSignalHandlers, recoverInterrupted, startInterruptSweep, type ShutdownSignal } from "../../src/daemon/lifecycle.js";
import { newRunId } from "../../src/pipeline/recorder.js";
import { emptyCounts, openStore, type RunRecord, type StateStore } from "../../src/state/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface Child {
  events: Array<Record<string, unknown>>;
  waitFor(event: string): Promise<Record<string, unknown>>;
  kill(signal: NodeJS.Signals): void;
  exit: Promise<number | null>;
}

function child(env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", "test/daemon/fixtures/shutdown-child.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const events: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: proc.stdout }).on("line", (line) => {
    events.push(JSON.parse(line) as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return {
    events,
    kill: (signal) => proc.kill(signal),
    exit,
    waitFor: async (event) => {
      for (;;) {
        const found = events.find((e) => e.event === event);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

describe("shutdown of a real process", () => {
  it("lets the run in flight finish within the grace period on SIGTERM", async () => {
    const c = child({ RUN_MS: "1500", GRACE_MS: "20000" });
    await c.waitFor("started");
    const sent = Date.now();
    c.kill("SIGTERM");
    const drained = await c.waitFor("drained");
    expect(drained).toMatchObject({ finished: 1, canceled: 0, stuck: [] });
    expect(c.events.find((e) => e.event === "finished")).toMatchObject({ outcome: "success", reason: null });
    expect(await c.exit).toBe(0);
    expect(Date.now() - sent).toBeLessThan(15_000);
  });

  it("cancels the run when the grace period runs out", async () => {
    const c = child({ RUN_MS: "60000", GRACE_MS: "800" });
    await c.waitFor("started");
    const sent = Date.now();
    c.kill("SIGTERM");
    expect(await c.waitFor("drained")).toMatchObject({ finished: 0, canceled: 1, stuck: [] });
    expect(c.events.find((e) => e.event === "finished")).toMatchObject({ outcome: "canceled", reason: "shutdown" });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(700);
    expect(await c.exit).toBe(0);
  });

  it("cancels at once on a second signal", async () => {
    const c = child({ RUN_MS: "60000", GRACE_MS: "60000" });
    await c.waitFor("started");
    const sent = Date.now();
    c.kill("SIGTERM");
    await c.waitFor("signal");
    c.kill("SIGINT");
    expect(await c.waitFor("drained")).toMatchObject({ finished: 0, canceled: 1 });
    expect(c.events.filter((e) => e.event === "signal").map((e) => e.n)).toEqual([1, 2]);
    expect(Date.now() - sent).toBeLessThan(20_000);
    expect(await c.exit).toBe(0);
  });
});

describe("installSignalHandlers", () => {
  it("calls onFirst once, onSecond after, and removes its listeners", () => {
    const target = new EventEmitter();
    const calls: string[] = [];
    const uninstall = installSignalHandlers({
      target: {
        on: (event: ShutdownSignal, fn: (s: ShutdownSignal) => void) => target.on(event, fn),
        off: (event: ShutdownSignal, fn: (s: ShutdownSignal) => void) => target.off(event, fn),
      },
      onFirst: (s) => calls.push(`first ${s}`),
      onSecond: (s) => calls.push(`second ${s}`),
    });
    target.emit("SIGTERM", "SIGTERM");
    target.emit("SIGINT", "SIGINT");
    target.emit("SIGTERM", "SIGTERM");
    expect(calls).toEqual(["first SIGTERM", "second SIGINT", "second SIGTERM"]);
    uninstall();
    expect(target.listenerCount("SIGTERM") + target.listenerCount("SIGINT")).toBe(0);
  });
});

describe("recoverInterrupted", () => {
  let dir = "";
  let store: StateStore | null = null;
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function openRun(id: string, heartbeat: string): RunRecord {
    return {
      id, automation: "feed", account: "acct", mode: "prod", trigger: "schedule", diff: true, force: false, notify: false, email: null,
      started: heartbeat, finished: null, outcome: null, counts: emptyCounts(), requests: { read: 0, write: 0 }, bytes: 0,
      files: [], debug_files: [], guard: null, error: null, heartbeat,
    };
  }

  it("marks runs with a stale heartbeat failed (interrupted) and leaves live ones", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "conveyor-life-"));
    store = await openStore({ dataDir: dir, databaseUrl: undefined });
    const now = Date.now();
    const dead = newRunId();
    const live = newRunId();
    await store.createRun(openRun(dead, new Date(now - 5 * 60_000).toISOString()));
    await store.createRun(openRun(live, new Date(now - 2_000).toISOString()));
    const recovered = await recoverInterrupted(store, new Date(now - 60_000));
    expect(recovered.map((r) => r.id)).toEqual([dead]);
    expect(await store.getRun(dead)).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
    expect((await store.getRun(live))?.outcome).toBeNull();

    // The sweep catches the second one once its heartbeat has gone stale too.
    const seen: string[] = [];
    const stop = startInterruptSweep(store, { staleMs: 1_000, everyMs: 50, onRecovered: (runs) => seen.push(...runs.map((r) => r.id)) });
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(seen).toEqual([live]);
  });
});
