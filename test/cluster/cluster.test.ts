import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { PgSchedulerState } from "../../src/daemon/scheduler-state-pg.js";
import { openPgPool, parsePgUrl } from "../../src/state/pg-connect.js";
import { silentLogger } from "../../src/log.js";
import { startCluster, type Cluster } from "../../src/daemon/cluster/index.js";
import { Metrics } from "../../src/daemon/metrics.js";
import { RunQueue } from "../../src/daemon/queue.js";
import type { QueuedRun, RunExecutor, RunRequest } from "../../src/daemon/types.js";
import type { RunRecord } from "../../src/state/index.js";
import { freshSchema } from "./pg-env.js";

/** Stands in for the pipeline: each run sleeps, and the test sees where and when it ran. */
class TimedExecutor implements RunExecutor {
  constructor(
    readonly daemon: string,
    readonly log: Array<{ daemon: string; run: QueuedRun; start: number; end: number }>,
    readonly ms: number,
  ) {}

  async execute(run: QueuedRun, signal: AbortSignal): Promise<{ outcome: string }> {
    const start = Date.now();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.log.push({ daemon: this.daemon, run, start, end: Date.now() });
    return { outcome: signal.aborted ? "canceled" : "success" };
  }
}

interface Node {
  queue: RunQueue;
  cluster: Cluster;
  skips: Array<{ key: string; fireTime: string; reason: string }>;
}

const request = (automation: string, extra: Partial<RunRequest> = {}): RunRequest => ({
  automation,
  account: "acme",
  mode: "prod",
  trigger: "api",
  diff: false,
  force: false,
  notify: false,
  email: null,
  ...extra,
});

describe("cluster queue on PostgreSQL", () => {
  const db = freshSchema("cl");
  const nodes: Node[] = [];
  const log: Array<{ daemon: string; run: QueuedRun; start: number; end: number }> = [];
  const marked: RunRecord[][] = [];
  let admin: pg.Client;

  async function startNode(name: string, runMs: number): Promise<Node> {
    const queue = new RunQueue({ executor: new TimedExecutor(name, log, runMs), concurrency: 2, maxRunTimeMs: 60_000 });
    const skips: Node["skips"] = [];
    const cluster = await startCluster({
      databaseUrl: db.url,
      queue,
      store: { markInterrupted: async () => [] },
      schedulerState: { recordSkip: async (key, fireTime, reason) => void skips.push({ key, fireTime, reason }) },
      concurrency: 2,
      maxRunTimeMs: 60_000,
      leaseMs: 20_000,
      pollingIntervalSeconds: 0.5,
      logger: silentLogger,
      onRecovered: (runs) => marked.push(runs),
    });
    const node = { queue, cluster, skips };
    nodes.push(node);
    return node;
  }

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: db.url.replace(/\?.*$/, "") });
    await admin.connect();
  });
  afterEach(async () => {
    for (const node of nodes.splice(0)) {
      await node.cluster.stopFetching();
      await node.queue.drain(5_000);
      await node.cluster.close();
    }
    log.length = 0;
  });
  afterAll(async () => {
    await admin.end();
    await db.drop();
  });

  async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error("timed out waiting");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("three daemons firing the same ticks: each fire time is claimed once and runs once", async () => {
    const all = await Promise.all(["a", "b", "c"].map((n) => startNode(n, 50)));
    const fireTimes = ["2030-01-01T10:00:00.000Z", "2030-01-01T10:01:00.000Z", "2030-01-01T10:02:00.000Z"];
    const results = [];
    for (const fireTime of fireTimes) {
      for (const key of ["k1", "k2", "k3", "k4"]) {
        const tick = request(key, { trigger: "schedule", fireTime });
        results.push(...(await Promise.all(all.map((n) => n.cluster.intake.offerTick(tick)))));
        // A tick fired while the previous is still queued or running may be skipped; wait so every fire runs.
        await until(() => log.filter((e) => e.run.automation === key && e.run.fireTime === fireTime).length === 1);
      }
    }
    const queued = results.filter((r) => "id" in r);
    expect(queued).toHaveLength(12);
    expect(results.filter((r) => "claimedBy" in r)).toHaveLength(24);
    const perFire = new Map<string, number>();
    for (const e of log) perFire.set(`${e.run.automation}@${e.run.fireTime}`, (perFire.get(`${e.run.automation}@${e.run.fireTime}`) ?? 0) + 1);
    expect([...perFire.values()]).toEqual(Array(12).fill(1));
    const claims = await admin.query(`SELECT count(*)::int AS n, count(run_id)::int AS runs FROM "${db.schema}".fire_claims`);
    expect(claims.rows[0]).toEqual({ n: 12, runs: 12 });
    // Retention forgets them with the skip notes.
    const pool = await openPgPool(parsePgUrl(db.url));
    try {
      await new PgSchedulerState(pool).pruneSkips(new Date(Date.now() + 60_000));
    } finally {
      await pool.end();
    }
    const left = await admin.query(`SELECT count(*)::int AS n FROM "${db.schema}".fire_claims`);
    expect(left.rows[0]).toEqual({ n: 0 });
  });

  it("one run per automation across daemons: a tick finding it running is skipped once, an API run waits", async () => {
    const [a, b] = await Promise.all([startNode("a", 1_500), startNode("b", 1_500)]);
    if (!a || !b) throw new Error("nodes");
    const first = await a.cluster.intake.enqueue(request("slow"));
    await until(() => a.queue.isRunning("slow") || b.queue.isRunning("slow"));
    const tick = request("slow", { trigger: "schedule", fireTime: "2030-01-01T11:00:00.000Z" });
    const answers = await Promise.all([a.cluster.intake.offerTick(tick), b.cluster.intake.offerTick(tick)]);
    expect(answers.filter((r) => "skipped" in r)).toEqual([{ skipped: "running" }]);
    // Two API requests while it runs: the second joins the first, which waits for the running one.
    const second = await b.cluster.intake.enqueue(request("slow"));
    const third = await a.cluster.intake.enqueue(request("slow"));
    expect(third).toMatchObject({ id: second.id, existing: true });
    // Any daemon answers for the waiting run, whichever one queued it.
    expect(await a.cluster.intake.waiting(second.id)).toMatchObject({ id: second.id, automation: "slow", mode: "prod", state: "waiting" });
    await until(() => log.filter((e) => e.run.automation === "slow").length === 2, 10_000);
    const [r1, r2] = log.filter((e) => e.run.automation === "slow");
    expect(r1?.run.id).toBe(first.id);
    expect(r2?.run.id).toBe(second.id);
    expect((r2?.start ?? 0) >= (r1?.end ?? Infinity)).toBe(true);
    expect(await b.cluster.intake.waiting(second.id)).toBeNull();
  });

  it("an undo waits in a slot of its own: it never joins the automation's waiting run, and runs with what it takes back", async () => {
    const [a, b] = await Promise.all([startNode("a", 800), startNode("b", 800)]);
    if (!a || !b) throw new Error("nodes");
    await a.cluster.intake.enqueue(request("undone"));
    await until(() => a.queue.isRunning("undone") || b.queue.isRunning("undone"));
    const run = await b.cluster.intake.enqueue(request("undone"));
    const undo = { of: "r20300101T000000-abcdef", identifiers: ["P1"], fields: [] };
    const first = await a.cluster.intake.enqueue(request("undone", { undo }));
    const again = await b.cluster.intake.enqueue(request("undone", { undo }));
    expect(first.id).not.toBe(run.id);
    expect(again).toMatchObject({ id: first.id, existing: true });
    expect(await b.cluster.intake.waiting(first.id)).toMatchObject({ id: first.id, automation: "undone", state: "waiting" });
    await until(() => log.filter((e) => e.run.automation === "undone").length === 3, 10_000);
    const ran = log.filter((e) => e.run.automation === "undone");
    expect(ran.find((e) => e.run.id === first.id)?.run.undo).toEqual(undo);
    expect(ran.find((e) => e.run.id === run.id)?.run.undo).toBeUndefined();
    // One at a time all the same: the automation's lock orders the three.
    const spans = ran.map((e) => [e.start, e.end] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++) expect((spans[i]?.[0] ?? 0) >= (spans[i - 1]?.[1] ?? Infinity)).toBe(true);
  });

  it("the shared queue's depth, the same from every daemon, in /metrics as conveyor_cluster_queue_depth", async () => {
    const a = await startNode("a", 2_000);
    for (const name of ["d1", "d2", "d3", "d4", "d5"]) await a.cluster.intake.enqueue(request(name));
    await until(() => a.queue.depth().running === 2);
    await until(async () => (await a.cluster.depth()).waiting === 3);
    expect(await a.cluster.depth()).toEqual({ waiting: 3, running: 2 });
    // A second daemon sees the same queue; it has a free slot, so it soon takes from it.
    const b = await startNode("b", 2_000);
    const seen = await b.cluster.depth();
    expect(seen.waiting + seen.running).toBe(5);
    const metrics = new Metrics({ queueDepth: () => b.queue.depth(), nextRuns: () => [], clusterDepth: () => b.cluster.depth() });
    await until(() => b.queue.depth().running > 0);
    const text = await metrics.render();
    const shared = (state: string): number => Number(new RegExp(`conveyor_cluster_queue_depth\\{state="${state}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);
    expect(shared("waiting") + shared("running")).toBeLessThanOrEqual(5);
    expect(shared("running")).toBeGreaterThanOrEqual(b.queue.depth().running);
    expect(text).toContain("# TYPE conveyor_cluster_queue_depth gauge");
    const down = new Metrics({ queueDepth: () => b.queue.depth(), nextRuns: () => [], clusterDepth: () => Promise.reject(new Error("database down")) });
    expect(await down.render()).not.toContain("conveyor_cluster_queue_depth");
    await until(() => log.length === 5, 15_000);
    // A run's finished event comes before its row leaves the shared queue: the depth follows a moment later.
    await until(async () => (await a.cluster.depth()).running === 0, 5_000);
    expect(await a.cluster.depth()).toEqual({ waiting: 0, running: 0 });
  });

  it("a lock whose lease ran out is swept, and the automation runs again", async () => {
    const node = await startNode("a", 50);
    await admin.query(`INSERT INTO "${db.schema}".run_locks (automation, run_id, daemon, heartbeat) VALUES ('orphan', 'r-dead', 'gone:1', now() - interval '25 seconds')`);
    const run = await node.cluster.intake.enqueue(request("orphan"));
    await until(() => log.some((e) => e.run.id === run.id), 15_000);
    const locks = await admin.query(`SELECT count(*)::int AS n FROM "${db.schema}".run_locks`);
    expect(locks.rows[0]).toEqual({ n: 0 });
  });
});
