import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "../../src/daemon/cluster/index.js";
import { setAsideName } from "../../src/daemon/cluster/queue-upgrade.js";
import { RunQueue } from "../../src/daemon/queue.js";
import type { QueuedRun } from "../../src/daemon/types.js";
import { silentLogger } from "../../src/log.js";
import { freshSchema, PG_URL } from "./pg-env.js";

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "pg-boss-10-queue.sql");
/** The run waiting in the fixture's queue when pg-boss 10 stopped. */
const LEGACY_RUN = "r20261125T175235-04b59a";

describe("a cluster database made with pg-boss 10", () => {
  const db = freshSchema("up");
  const bossSchema = `${db.schema}_queue`;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    // The dump clears search_path for its session: this client runs nothing else before it.
    await admin.query(readFileSync(FIXTURE, "utf8").replaceAll("__SCHEMA__", db.schema));
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${setAsideName(bossSchema)}" CASCADE`);
    await admin.end();
    await db.drop();
  });

  it("starts under pg-boss 12 on two daemons at once, and its waiting run runs once", async () => {
    expect((await admin.query(`SELECT version FROM "${bossSchema}".version`)).rows[0]).toEqual({ version: 24 });
    const ran: QueuedRun[] = [];
    const start = async (): Promise<{ queue: RunQueue; cluster: Cluster }> => {
      const queue = new RunQueue({ executor: { execute: async (run) => (ran.push(run), { outcome: "success" }) }, concurrency: 1, maxRunTimeMs: 60_000 });
      const cluster = await startCluster({
        databaseUrl: db.url,
        queue,
        store: { markInterrupted: async () => [] },
        schedulerState: { recordSkip: async () => undefined },
        concurrency: 1,
        maxRunTimeMs: 60_000,
        leaseMs: 20_000,
        pollingIntervalSeconds: 0.5,
        logger: silentLogger,
      });
      return { queue, cluster };
    };
    const nodes = await Promise.all([start(), start()]);
    try {
      const version = await admin.query<{ version: number }>(`SELECT version FROM "${bossSchema}".version`);
      expect(version.rows[0]?.version).toBeGreaterThanOrEqual(25);
      const aside = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [setAsideName(bossSchema)]);
      expect(aside.rowCount).toBe(0);
      const end = Date.now() + 15_000;
      while (ran.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      // A new run goes through the upgraded queue too.
      const fresh = await nodes[0].cluster.intake.enqueue({ automation: "fresh", account: "acme", mode: "prod", trigger: "api", diff: false, force: false, notify: false, email: null });
      while (ran.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1_500));
      expect(ran.map((run) => [run.automation, run.id]).sort()).toEqual([
        ["fresh", fresh.id],
        ["legacy", LEGACY_RUN],
      ]);
      expect((await admin.query(`SELECT 1 FROM "${db.schema}".run_waiting`)).rowCount).toBe(0);
    } finally {
      for (const node of nodes) {
        await node.cluster.stopFetching();
        await node.queue.drain(5_000);
        await node.cluster.close();
      }
    }
  });
});
