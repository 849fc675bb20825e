import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SqliteDaemonDb } from "../../src/daemon/daemon-db-sqlite.js";
import { recoverQueue } from "../../src/daemon/lifecycle.js";
import { RunQueue, type FinishedEvent } from "../../src/daemon/queue.js";
import type { RunRequest } from "../../src/daemon/types.js";
import { ConveyorError } from "../../src/errors.js";
import { RunRecorder } from "../../src/pipeline/recorder.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { TimedExecutor } from "./harness.js";

function request(automation: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { automation, account: "acct", mode: "prod", trigger: "api", diff: true, force: false, notify: false, email: null, ...extra };
}

let file: string;
const opened: SqliteDaemonDb[] = [];

/** The daemon tables in a real state file; a second call is the next process opening the same file. */
function openDb(): SqliteDaemonDb {
  const db = SqliteDaemonDb.open(file);
  opened.push(db);
  return db;
}

beforeEach(() => {
  file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-journal-")), "state.db");
});
afterEach(async () => {
  vi.useRealTimers();
  for (const db of opened.splice(0)) await db.close();
});

describe("the run queue with a journal", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date("2025-01-01T00:00:00Z") });
  });

  it("writes a run down when it is accepted and crosses it out only when it ends", async () => {
    const db = openDb();
    const queue = new RunQueue({ executor: new TimedExecutor(60_000), concurrency: 1, maxRunTimeMs: 3600_000, journal: db.queue });
    const first = queue.enqueue(request("a"));
    const second = queue.enqueue(request("a", { mode: "debug", fireTime: "2025-01-01T00:00:00.000Z" }));
    expect(queue.enqueue(request("a", { mode: "debug" }))).toMatchObject({ id: second.id, existing: true });
    await vi.advanceTimersByTimeAsync(1_000);
    // The running run stays written down: a crash now must find it at the next start.
    expect(db.queue.list().entries.map((e) => e.run.id)).toEqual([first.id, second.id]);
    expect(db.queue.list().entries[1]).toEqual({ run: { ...request("a", { mode: "debug", fireTime: "2025-01-01T00:00:00.000Z" }), id: second.id }, enqueued: "2025-01-01T00:00:00.000Z" });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(db.queue.list().entries.map((e) => e.run.id)).toEqual([second.id]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(db.queue.list().entries).toEqual([]);
  });

  it("a drain keeps the waiting runs, and the next process runs them in order under their ids", async () => {
    const executor = new TimedExecutor(20_000);
    const queue = new RunQueue({ executor, concurrency: 1, maxRunTimeMs: 3600_000, journal: openDb().queue });
    const finished: FinishedEvent[] = [];
    queue.on("finished", (e) => finished.push(e));
    const running = queue.enqueue(request("a"));
    const b = queue.enqueue(request("b"));
    await vi.advanceTimersByTimeAsync(5_000);
    const c = queue.enqueue(request("c"));
    const drained = queue.drain(60_000);
    await vi.advanceTimersByTimeAsync(20_000);
    await expect(drained).resolves.toEqual({ finished: 1, canceled: 0, stuck: [], kept: 2 });
    expect(finished.map((e) => e.run.id)).toEqual([running.id]);
    expect(executor.runs.map((r) => r.run.id)).toEqual([running.id]);

    const next = new TimedExecutor(20_000);
    const again = new RunQueue({ executor: next, concurrency: 1, maxRunTimeMs: 3600_000, journal: openDb().queue });
    const { entries } = openDb().queue.list();
    again.restore(entries);
    expect(again.list().map((r) => [r.id, r.state, r.enqueued])).toEqual([
      [b.id, "running", "2025-01-01T00:00:00.000Z"],
      [c.id, "waiting", "2025-01-01T00:00:05.000Z"],
    ]);
    // A request for an automation already waiting joins the restored run.
    expect(again.enqueue(request("c"))).toEqual({ id: c.id, queued: true, existing: true });
    await vi.advanceTimersByTimeAsync(40_000);
    expect(next.runs.map((r) => [r.run.id, r.outcome])).toEqual([
      [b.id, "success"],
      [c.id, "success"],
    ]);
    expect(openDb().queue.list().entries).toEqual([]);
  });

  it("a run canceled while it waits leaves the journal; the second signal keeps the others", async () => {
    const db = openDb();
    const queue = new RunQueue({ executor: new TimedExecutor(60_000), concurrency: 1, maxRunTimeMs: 3600_000, journal: db.queue });
    queue.enqueue(request("a"));
    const b = queue.enqueue(request("b"));
    const c = queue.enqueue(request("c"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(queue.cancel(b.id)).toBe(true);
    const drained = queue.drain(60_000);
    queue.cancelAll("shutdown");
    await vi.advanceTimersByTimeAsync(0);
    await expect(drained).resolves.toMatchObject({ finished: 0, canceled: 1, kept: 1 });
    expect(db.queue.list().entries.map((e) => e.run.id)).toEqual([c.id]);
  });

  it("refuses a run it cannot write down, so no request is answered and then lost", () => {
    const db = openDb();
    const queue = new RunQueue({ executor: new TimedExecutor(), concurrency: 1, maxRunTimeMs: 3600_000, journal: db.queue });
    void db.close();
    expect(() => queue.enqueue(request("a"))).toThrow(ConveyorError);
    expect(() => queue.enqueue(request("a"))).toThrow(/automation a could not be kept in the queue table of .*state\.db/);
    expect(queue.depth()).toEqual({ waiting: 0, running: 0 });
  });
});

describe("recovery at a SQLite daemon's start", () => {
  it("marks the journal's open runs interrupted whatever their heartbeat, leaves a live CLI run alone, hands back runs never started", async () => {
    const store = new SqliteStore(file);
    const db = openDb();
    const start = (id: string, trigger: RunRequest["trigger"] = "api") => RunRecorder.start(store, { ...request("a", { trigger }), id });
    const now = new Date().toISOString();
    db.queue.add({ ...request("a"), id: "r-inflight" }, now);
    db.queue.add({ ...request("b"), id: "r-waiting" }, now);
    db.queue.add({ ...request("c"), id: "r-done" }, now);
    db.queue.add({ ...request("d"), id: "r-waiting-2" }, now);
    const inflight = await start("r-inflight");
    const done = await start("r-done");
    await done.finish("success");
    const cli = await start("r-cli", "manual");
    const dead = await start("r-cli-dead", "manual");
    await store.updateRun("r-cli-dead", { heartbeat: "2000-01-01T00:00:00.000Z" });
    const raw = new Database(file);
    raw.prepare("INSERT INTO daemon_queue (id, enqueued, body) VALUES (?, ?, ?)").run("r-broken", now, "{not json");
    raw.close();

    const recovered = await recoverQueue(store, db.queue, new Date(Date.now() - 60_000));
    expect(recovered.interrupted.map((r) => r.id).sort()).toEqual(["r-cli-dead", "r-inflight"]);
    expect(recovered.requeue.map((e) => e.run.id)).toEqual(["r-waiting", "r-waiting-2"]);
    expect(recovered.unreadable).toEqual(["r-broken"]);
    expect(await store.getRun("r-inflight")).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
    expect(await store.getRun("r-cli")).toMatchObject({ outcome: null, finished: null });
    expect(await store.getRun("r-done")).toMatchObject({ outcome: "success" });
    // Only the runs still to start stay written down.
    expect(db.queue.list().entries.map((e) => e.run.id)).toEqual(["r-waiting", "r-waiting-2"]);
    for (const recorder of [inflight, cli, dead]) await recorder.finish("canceled").catch(() => undefined);
    await store.close();
  });
});
