import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { api, openClusterEnv, until, writeDefinitions, type ClusterEnv } from "./daemons.js";
import { freshSchema } from "./pg-env.js";

const ROWS = 12;
const products = ["guid,sku,title,stock,cost", ...Array.from({ length: ROWS }, (_, i) => `g-${i},S${i},Product ${i},0,1.00`)].join("\n");
const feed = ["sku,qty", ...Array.from({ length: ROWS }, (_, i) => `S${i},${100 + i}`)].join("\n");

const definition = {
  name: "Slow stock",
  active: true,
  schedule: "0 3 1 1 *",
  type: "products",
  action: "import",
  connection: { type: "sdsftp", path: "feeds" },
  file_configs: [{ name: "stock\\.csv", min_age: 0, field_map: { sku: "sku", stock: "qty" }, identifier: "sku", update: "edit" }],
};

describe("a daemon killed with SIGKILL during a run", () => {
  const db = freshSchema("crash");
  let env: ClusterEnv | undefined;
  afterAll(async () => {
    await env?.close();
    await db.drop();
  });

  it("its run is marked interrupted within the lease by another daemon, and the next run finishes the work", async () => {
    // One bulk row a second: the run waits on its bulk job for about 12 s.
    env = await openClusterEnv(db.url, { bulkBatchRows: 1, bulkBatchDelayMs: 1_000, readLimit: 100_000, writeLimit: 100_000 }, products);
    writeFileSync(path.join(env.feeds, "stock.csv"), feed);
    const folder = writeDefinitions(env.dir, { "slow.json": definition });
    const a = await env.spawnDaemon("a", { CONVEYOR_AUTOMATIONS: folder });
    const b = await env.spawnDaemon("b");
    const { headers } = env;
    const list = (await api(a.url, headers, "/v3/automations/custom")) as { automations: Array<{ id: string }> };
    const key = list.automations[0]?.id ?? "";
    const queued = await api(b.url, headers, `/v3/automations/custom/${key}/run`);
    const runId = String(queued.id);

    // Whichever daemon had a free slot took it: kill that one once its bulk job is under way.
    const runner = await until("the run to start", async () => [a, b].find((d) => d.events.some((e) => e.event === "run_started" && e.run_id === runId)), 20_000);
    const survivor = runner === a ? b : a;
    const service = env.service;
    await until("the bulk job", async () => (service.context.db.prepare("SELECT count(*) AS n FROM bulk_jobs").get() as { n: number }).n > 0, 20_000);
    await new Promise((r) => setTimeout(r, 1_500));
    runner.proc.kill("SIGKILL");
    await runner.exited;
    const killedAt = Date.now();
    const open = await api(survivor.url, headers, `/v3/automations/runs/${runId}`);
    expect(open.outcome ?? null).toBeNull();

    const record = await until(
      "the run to be marked interrupted",
      async () => {
        const r = await api(survivor.url, headers, `/v3/automations/runs/${runId}`);
        return r.outcome ? r : null;
      },
      40_000,
    );
    const detectedMs = Date.now() - killedAt;
    expect(record).toMatchObject({ outcome: "failed", error: { code: "interrupted" } });
    // Lease 20 s, renewed and swept every 5 s: the heartbeat was at most 10 s old when the daemon died.
    expect(detectedMs).toBeLessThanOrEqual(20_000 + 5_000 + 2_000);
    console.info(`killed ${runner.name} during the run; ${survivor.name} marked it interrupted ${detectedMs} ms later`);

    const again = await api(survivor.url, headers, `/v3/automations/custom/${key}/run`);
    const done = await until(
      "the next run",
      async () => {
        const r = await api(survivor.url, headers, `/v3/automations/runs/${String(again.id)}`);
        return r.outcome ? r : null;
      },
      60_000,
    );
    expect(done.outcome).toBe("success");
    // The feed's values are in the service, each row written at most by one bulk job per run, none created.
    const counts = done.counts as Record<string, number>;
    expect(counts.create ?? 0).toBe(0);
    expect((counts.update ?? 0) + (counts.unchanged ?? 0)).toBe(ROWS);
    for (let i = 0; i < ROWS; i++) {
      const res = await fetch(`${env.service.url}/v1/editor/items/edit?guid=g-${i}`, { headers });
      expect(((await res.json()) as Record<string, string>).stock).toBe(String(100 + i));
    }
    expect(survivor.events.some((e) => e.event === "runs_interrupted")).toBe(true);
  }, 180_000);
});
