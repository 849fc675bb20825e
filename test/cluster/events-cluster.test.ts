import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { newOrder, orderCreatedDefinition, PARTNER_SECRET } from "../events/fixtures/order-created.js";
import { openClusterEnv, until, writeDefinitions, type ClusterEnv } from "./daemons.js";
import { freshSchema, PG_URL } from "./pg-env.js";
import { startRelay, type Relay } from "./round-robin-relay.js";

const ORDERS = 60;

/**
 * The last Must show: three daemons on PostgreSQL behind a
 * round-robin relay (CONVEYOR_PUBLIC_URL), one remote embedded service; the
 * webhooks land on all three, and every order reaches the partner once, each
 * event taken by exactly one run.
 */
describe("three daemons on PostgreSQL, runs on events", () => {
  const db = freshSchema("evcl");
  let env: ClusterEnv | undefined;
  let relay: Relay | undefined;
  let api: PartnerApi | undefined;
  afterAll(async () => {
    await env?.close();
    await relay?.close();
    await api?.close();
    await db.drop();
  });

  it("delivers each order once, whichever daemon took its webhook", async () => {
    api = await startPartnerApi({ port: 0, clientSecret: PARTNER_SECRET });
    const partner = api;
    relay = await startRelay();
    env = await openClusterEnv(db.url, { readLimit: 1_000_000, writeLimit: 1_000_000 });
    const cluster = env;
    const folder = writeDefinitions(cluster.dir, { "order-created.json": orderCreatedDefinition(partner.url) });
    const common = { CONVEYOR_PUBLIC_URL: relay.url, CONVEYOR_EVENT_WINDOW: "1s" };
    const a = await cluster.spawnDaemon("a", { ...common, CONVEYOR_AUTOMATIONS: folder });
    const others = await Promise.all(["b", "c"].map((name) => cluster.spawnDaemon(name, common)));
    relay.targets.push(a.url, ...others.map((d) => d.url));

    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const schema = `"${db.schema}"`;
      await until("the webhook endpoint's registration", async () => (await client.query(`SELECT 1 FROM ${schema}.daemon_webhooks`)).rowCount === 1, 30_000);
      const numbers = Array.from({ length: ORDERS }, (_, i) => `CL-${String(7000 + i)}`);
      for (const n of numbers) {
        const res = await fetch(`${cluster.service.url}/v3/orders`, { method: "POST", headers: { ...cluster.headers, "Content-Type": "application/json" }, body: JSON.stringify(newOrder(n)) });
        expect(res.status, await res.text()).toBeLessThan(300);
        await new Promise((r) => setTimeout(r, 30));
      }
      const received = (): string[] => (partner.state.orders as Array<{ order_id: string }>).map((o) => o.order_id);
      await until("every order at the partner", async () => numbers.every((n) => received().includes(n)), 60_000);
      await until("every claim settled", async () => (await client.query(`SELECT 1 FROM ${schema}.event_claims WHERE state <> 'done'`)).rowCount === 0, 20_000);
      // A few seconds more: a second run of any event would show here.
      await new Promise((r) => setTimeout(r, 3_000));

      expect(received().sort()).toEqual([...numbers].sort());
      for (const target of relay.targets) expect(relay.counts.get(target) ?? 0).toBeGreaterThan(0);
      const claims = await client.query<{ event_id: string; state: string; run_id: string | null }>(`SELECT event_id, state, run_id FROM ${schema}.event_claims`);
      expect(claims.rows).toHaveLength(ORDERS);
      for (const c of claims.rows) expect(c).toMatchObject({ state: "done", run_id: expect.any(String) });
      const twice = await client.query(`SELECT event_id FROM ${schema}.run_events GROUP BY event_id HAVING count(*) > 1`);
      expect(twice.rows).toEqual([]);
      const taken = await client.query<{ n: number }>(`SELECT count(DISTINCT event_id)::int AS n FROM ${schema}.run_events`);
      expect(taken.rows[0]?.n).toBe(ORDERS);
      const runs = await client.query<{ trigger: string; outcome: string; n: number }>(
        `SELECT r.body->>'trigger' AS trigger, r.outcome, count(*)::int AS n FROM ${schema}.runs r WHERE r.id IN (SELECT run_id FROM ${schema}.event_claims) GROUP BY 1, 2`,
      );
      expect(runs.rows).toEqual([{ trigger: "event", outcome: "success", n: expect.any(Number) }]);
      expect(runs.rows[0]?.n ?? ORDERS).toBeLessThan(ORDERS);
    } finally {
      await client.end();
    }
  }, 180_000);
});
