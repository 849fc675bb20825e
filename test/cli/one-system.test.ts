import { execFile, spawn } from "node:child_process";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockHolder, openStore, waitForAutomation } from "../../src/state/index.js";
import { startTestDaemon, waitForRun, type TestDaemon } from "../daemon/daemon-harness.js";
import { PgSchemas } from "../helpers/postgres.js";

/**
 * One system: an automation created over the daemon's API, run by the daemon
 * and by `conveyor run` (separate processes on the same data folder), is one
 * automation: one key for its runs, one snapshot, one ledger, one lock.
 */
const SLUG = "one-system-feed";
const pgs = new PgSchemas();

interface RunJson {
  id: string;
  automation: string;
  outcome: string;
  mode: string;
  diff: boolean;
  counts: Record<string, number>;
  files: Array<{ name: string }>;
  started: string;
  finished: string;
}

function definition(): Record<string, unknown> {
  return {
    name: "One system feed",
    slug: SLUG,
    active: true,
    schedule: "0 3 * * *",
    type: "products",
    action: "import",
    connection: { type: "sdsftp", path: "one-system" },
    file_configs: [{ name: "in-\\d+\\.csv", select: "new", min_age: 0, identifier: "guid", create: "add", update: "edit", field_map: { guid: "guid", title: "title", stock: "stock" } }],
  };
}

afterAll(async () => {
  await pgs.end();
});

/** The same story on either state database: `databaseUrl` is what the daemon and every CLI process are given. */
function oneSystem(name: string, databaseUrl: () => string | undefined): void {
  describe(`one system (${name})`, () => {
    let t: TestDaemon;
    let dataDir: string;
    let feeds: string;
    let id: string;
    let url: string | undefined;

    /** A feed file in the account's storage, an hour old so no age rule holds it back. */
    function dropFeed(name: string): void {
      const file = path.join(feeds, name);
      writeFileSync(file, "guid,title,stock\nOS1,One,4\nOS2,Two,5\nOS3,Three,6\n");
      utimesSync(file, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    }

    function cliEnv(): NodeJS.ProcessEnv {
      return { ...process.env, CONVEYOR_DATA_DIR: dataDir, CONVEYOR_READ_LIMIT: "100000", CONVEYOR_WRITE_LIMIT: "100000", ...(url ? { CONVEYOR_DATABASE_URL: url } : {}) };
    }

    function conveyor(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
      return new Promise((resolve) => {
        execFile(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env: cliEnv(), timeout: 90_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
        );
      });
    }

    beforeAll(async () => {
      url = databaseUrl();
      t = await startTestDaemon(url ? { env: { CONVEYOR_DATABASE_URL: url } } : {});
      dataDir = t.settings.dataDir;
      feeds = path.join(t.settings.storage, "demo", "one-system");
      mkdirSync(feeds, { recursive: true });
      const created = await t.request("POST", "/v3/automations/custom", definition());
      expect(created.status, created.text).toBe(200);
      id = String(created.body.id);
    }, 60_000);

    afterAll(async () => {
      await t.close();
    });

    describe("one system: the daemon and conveyor run share one automation", () => {
      const runIds: string[] = [];

      it("the daemon's live run creates the feed's products and records the file in the ledger", async () => {
        dropFeed("in-1.csv");
        const queued = await t.request("GET", `/v3/automations/custom/${id}/run`);
        expect(queued.status, queued.text).toBe(200);
        const run = await waitForRun(t, String(queued.body.id), 60_000);
        expect(run).toMatchObject({ automation: id, outcome: "success", counts: expect.objectContaining({ rows: 3, create: 3 }) });
        runIds.push(String(queued.body.id));
      }, 90_000);

      it("`conveyor run <id>` runs the stored automation under its id and does not read the processed file again", async () => {
        const result = await conveyor(["run", id, "--json"]);
        expect(result.code, result.stderr).toBe(0);
        const run = JSON.parse(result.stdout) as RunJson;
        expect(run.automation).toBe(id);
        expect(run.outcome).toBe("nothing");
        expect(run.counts.rows).toBe(0);
        expect(run.files).toEqual([]);
        runIds.push(run.id);
        const listing = await conveyor(["ls", id, "--json"]);
        expect(listing.code, listing.stderr).toBe(0);
        expect((JSON.parse(listing.stdout) as { files: Array<{ name: string; status: string }> }).files).toEqual([expect.objectContaining({ name: "in-1.csv", status: "already processed" })]);
      }, 90_000);

      it("`conveyor run <slug> --diff` compares with the daemon's snapshot: a new file with the same values plans nothing", async () => {
        dropFeed("in-2.csv");
        const result = await conveyor(["run", SLUG, "--diff", "--json"]);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toContain(`${SLUG} is automation ${id} in the state database: the run is recorded under ${id}`);
        const run = JSON.parse(result.stdout) as RunJson;
        expect(run).toMatchObject({ automation: id, diff: true, mode: "prod" });
        expect(run.files.map((f) => f.name)).toEqual(["in-2.csv"]);
        expect(run.counts).toMatchObject({ rows: 3, create: 0, update: 0 });
        runIds.push(run.id);
      }, 90_000);

      it("`conveyor runs --json` and GET /v3/automations/runs list the three runs under the automation's id", async () => {
        for (const arg of [id, SLUG]) {
          const listed = await conveyor(["runs", arg, "--json"]);
          expect(listed.code, listed.stderr).toBe(0);
          const runs = JSON.parse(listed.stdout) as RunJson[];
          expect(runs.map((r) => r.id).sort()).toEqual([...runIds].sort());
          expect(new Set(runs.map((r) => r.automation))).toEqual(new Set([id]));
        }
        const api = await t.request("GET", `/v3/automations/runs?automation=${id}`);
        expect(api.status).toBe(200);
        const runs = api.body.runs as RunJson[];
        expect(runs.map((r) => r.id).sort()).toEqual([...runIds].sort());
        expect(new Set(runs.map((r) => r.automation))).toEqual(new Set([id]));
      }, 90_000);

      it("a definition file with the automation's slug runs as that automation, and the terminal says so", async () => {
        const file = path.join(t.dir, "one-system.json");
        writeFileSync(file, JSON.stringify({ ...definition(), name: "One system feed, edited" }));
        const result = await conveyor(["run", file, "--debug", "--json"]);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toContain(`is automation ${id} (slug ${SLUG}) in the state database: the run is recorded under ${id}`);
        expect(result.stderr).toContain("the file differs from the stored definition: this run uses the file's");
        const run = JSON.parse(result.stdout) as RunJson;
        expect(run.automation).toBe(id);
        const listed = await conveyor(["runs", file, "--json"]);
        expect((JSON.parse(listed.stdout) as RunJson[]).map((r) => r.id)).toContain(run.id);
        writeFileSync(file, JSON.stringify(definition()));
        const same = await conveyor(["run", file, "--debug", "--json"]);
        expect(same.code, same.stderr).toBe(0);
        expect(same.stderr).toContain(`is automation ${id} (slug ${SLUG}) in the state database`);
        expect(same.stderr).not.toContain("differs");
        const unknown = await conveyor(["run", "4040"]);
        expect(unknown.code).toBe(2);
        expect(unknown.stderr).toContain('no automation with id or slug "4040" in the state database');
      }, 90_000);
    });

    describe("one system: no overlap between the daemon and conveyor run", () => {
      it("refuses a CLI run while another run holds the automation, waits with --wait, and the daemon's run waits too", async () => {
        // The test process stands for a run in progress elsewhere: it holds the automation's lock in the state file.
        const store = await openStore({ dataDir, databaseUrl: url });
        // A file no run has read, so both debug runs below have rows to plan.
        dropFeed("in-3.csv");
        const holder = await waitForAutomation(store, { automation: id, runId: "run-held-by-test", holder: lockHolder("daemon") });
        try {
          const refused = await conveyor(["run", id]);
          expect(refused.code).toBe(1);
          expect(refused.stderr).toContain(`automation ${id} is running: run run-held-by-test`);
          expect(refused.stderr).toContain(`conveyor run ${id} --wait`);

          const queued = await t.request("GET", `/v3/automations/custom/${id}/run?debug=1`);
          const daemonRun = String(queued.body.id);
          const waiting = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "run", SLUG, "--debug", "--wait", "--json"], { env: cliEnv() });
          let stdout = "";
          let stderr = "";
          waiting.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
          waiting.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
          const exited = new Promise<number>((resolve) => waiting.on("close", (code) => resolve(code ?? 1)));
          for (let i = 0; i < 300 && !stderr.includes("waiting:"); i++) await new Promise((r) => setTimeout(r, 100));
          expect(stderr).toContain(`waiting: automation ${id} is running (run run-held-by-test`);
          // Neither started while the lock was held: the daemon's run has no record yet.
          expect(await store.getRun(daemonRun)).toBeNull();
          await holder.release();

          expect(await exited, stderr).toBe(0);
          const cliRun = JSON.parse(stdout) as RunJson;
          const daemonRecord = (await waitForRun(t, daemonRun, 60_000)) as unknown as RunJson;
          expect(cliRun.outcome).toBe("success");
          expect(daemonRecord.outcome).toBe("success");
          // One after the other, never side by side.
          const [first, second] = [cliRun, daemonRecord].sort((a, b) => (a.started < b.started ? -1 : 1));
          expect((first as RunJson).finished <= (second as RunJson).started).toBe(true);
        } finally {
          await holder.release();
          await store.close();
        }
      }, 120_000);
    });
  });
}

oneSystem("sqlite", () => undefined);
oneSystem("postgres", () => pgs.url());
