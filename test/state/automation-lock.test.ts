import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureClusterSchema } from "../../src/daemon/cluster/schema.js";
import { holdAutomation, lockHolder, waitForAutomation, type HeldLock, type StateStore } from "../../src/state/index.js";
import { PostgresStore } from "../../src/state/postgres.js";
import { SqliteStore } from "../../src/state/sqlite.js";
import { PG_URL, PgSchemas } from "../helpers/postgres.js";

const pgs = new PgSchemas();
afterAll(async () => {
  await pgs.end();
});

function held(result: HeldLock | { busy: unknown }): HeldLock {
  if ("busy" in result) throw new Error(`expected the lock, got ${JSON.stringify(result.busy)}`);
  return result;
}

/** Two or more stores on one database stand for separate processes (a daemon and CLI runs). */
function lockSuite(name: string, open: () => Promise<() => Promise<StateStore>>): void {
  describe(`automation lock: ${name}`, () => {
    it("lets one run hold an automation; the others see which run holds it", async () => {
      const opener = await open();
      const [a, b] = [await opener(), await opener()];
      const first = held(await holdAutomation(a, { automation: "3", runId: "run-a", holder: lockHolder("daemon") }));
      const second = await holdAutomation(b, { automation: "3", runId: "run-b", holder: lockHolder("cli") });
      expect(second).toMatchObject({ busy: { automation: "3", run_id: "run-a", holder: lockHolder("daemon") } });
      // Another automation is free; the holder asking again keeps it.
      held(await holdAutomation(b, { automation: "4", runId: "run-c", holder: lockHolder("cli") }));
      expect((await a.lockAutomation({ automation: "3", runId: "run-a", holder: lockHolder("daemon") }, 60_000)).run_id).toBe("run-a");
      await first.release();
      held(await holdAutomation(b, { automation: "3", runId: "run-b", holder: lockHolder("cli") }));
      await Promise.all([a.close(), b.close()]);
    });

    it("gives the lock to exactly one of many asking at once", async () => {
      const opener = await open();
      const stores = await Promise.all(Array.from({ length: 6 }, () => opener()));
      const results = await Promise.all(stores.map((s, i) => holdAutomation(s, { automation: "9", runId: `run-${i}`, holder: lockHolder("cli") })));
      const winners = results.filter((r) => !("busy" in r));
      expect(winners).toHaveLength(1);
      const winner = winners[0] as HeldLock;
      for (const r of results) if ("busy" in r) expect(r.busy.run_id).toBe(winner.lock.run_id);
      await Promise.all(stores.map((s) => s.close()));
    });

    it("takes the lock over from a holder whose lease ran out", async () => {
      const opener = await open();
      const [a, b] = [await opener(), await opener()];
      held(await holdAutomation(a, { automation: "5", runId: "run-dead", holder: "daemon far-away-host:1" }, 300));
      expect(await holdAutomation(b, { automation: "5", runId: "run-new", holder: lockHolder("cli") }, 60_000)).toMatchObject({ busy: { run_id: "run-dead" } });
      await new Promise((r) => setTimeout(r, 450));
      held(await holdAutomation(b, { automation: "5", runId: "run-new", holder: lockHolder("cli") }, 300));
      expect(await a.renewLock("5", "run-dead")).toBe(false);
      expect(await b.renewLock("5", "run-new")).toBe(true);
      await Promise.all([a.close(), b.close()]);
    });

    it("waits for the holder to end, saying whom it waits for, and stops waiting when aborted", async () => {
      const opener = await open();
      const [a, b] = [await opener(), await opener()];
      const first = held(await holdAutomation(a, { automation: "7", runId: "run-a", holder: lockHolder("daemon") }));
      const seen: string[] = [];
      const waiting = waitForAutomation(b, { automation: "7", runId: "run-b", holder: lockHolder("cli") }, { pollMs: 50, onWaiting: (l) => seen.push(l.run_id) });
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.length).toBeGreaterThan(1);
      expect(new Set(seen)).toEqual(new Set(["run-a"]));
      await first.release();
      const second = await waiting;
      expect(second.lock.run_id).toBe("run-b");
      const controller = new AbortController();
      const third = waitForAutomation(a, { automation: "7", runId: "run-c", holder: lockHolder("daemon") }, { pollMs: 50, signal: controller.signal });
      setTimeout(() => controller.abort(), 150);
      await expect(third).rejects.toMatchObject({ code: "canceled", message: expect.stringContaining("run run-b of automation 7") });
      await second.release();
      await Promise.all([a.close(), b.close()]);
    });
  });
}

lockSuite("sqlite", async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-lock-")), "state.db");
  return async () => new SqliteStore(file);
});

lockSuite("postgres", async () => {
  const schema = pgs.fresh();
  return () => PostgresStore.open(PG_URL, { schema, poolSize: 2 });
});

describe("automation lock: a holder that died", () => {
  it("sqlite: a killed process on this machine holds nothing, whatever its lease", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-lock-")), "state.db");
    const store = new SqliteStore(file);
    const gone = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid;
    held(await holdAutomation(store, { automation: "3", runId: "run-killed", holder: `cli ${hostname()}:${gone}` }));
    const next = held(await holdAutomation(store, { automation: "3", runId: "run-next", holder: lockHolder("cli") }, 3_600_000));
    expect(next.lock.run_id).toBe("run-next");
    await next.release();
    await store.close();
  });

  it("sqlite: a process killed with SIGKILL while it holds the lock frees it for the next run at once", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "conveyor-lock-")), "state.db");
    const script = `
      import { SqliteStore } from "./src/state/sqlite.ts";
      import { holdAutomation, lockHolder } from "./src/state/index.ts";
      const store = new SqliteStore(${JSON.stringify(file)});
      await holdAutomation(store, { automation: "3", runId: "run-killed", holder: lockHolder("cli") });
      process.stdout.write("held\\n");
      setInterval(() => undefined, 1000);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (b: Buffer) => b.toString().includes("held") && resolve());
      child.on("exit", (code) => reject(new Error(`the holder exited first (${String(code)})`)));
    });
    const store = new SqliteStore(file);
    expect(await holdAutomation(store, { automation: "3", runId: "run-next", holder: lockHolder("cli") }, 3_600_000)).toMatchObject({ busy: { run_id: "run-killed" } });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    const next = held(await holdAutomation(store, { automation: "3", runId: "run-next", holder: lockHolder("cli") }, 3_600_000));
    expect(next.lock.run_id).toBe("run-next");
    await next.release();
    await store.close();
  }, 30_000);

  it("postgres: the lock is the cluster's run lock, so a daemon's running run holds off a CLI run", async () => {
    const schema = pgs.fresh();
    const store = await PostgresStore.open(PG_URL, { schema, poolSize: 2 });
    await ensureClusterSchema(store.pool);
    // What the cluster's dispatcher writes before a run starts.
    await store.pool.query("INSERT INTO run_locks (automation, run_id, daemon) VALUES ($1, $2, $3)", ["3", "run-cluster", "host:1:abc"]);
    expect(await holdAutomation(store, { automation: "3", runId: "run-cli", holder: lockHolder("cli") })).toMatchObject({ busy: { run_id: "run-cluster", holder: "host:1:abc" } });
    // The executor of the run the dispatcher locked asks again and keeps it, under the dispatcher's name its lease keeper renews.
    const mine = held(await holdAutomation(store, { automation: "3", runId: "run-cluster", holder: lockHolder("daemon") }));
    expect(mine.lock.holder).toBe("host:1:abc");
    await mine.release();
    const { rowCount } = await store.pool.query("SELECT 1 FROM run_locks WHERE automation = '3'");
    expect(rowCount).toBe(0);
    await store.close();
  });
});
