import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signature } from "../../src/embedded/webhook-dispatch.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { read, spawnEventsDaemon, until, type EventsDaemon } from "./fixtures/events-process.js";
import { newOrder, PARTNER_SECRET } from "./fixtures/order-created.js";

/**
 * The Must show on the embedded default: the daemon answers the
 * order.created webhook and is killed with SIGKILL before any run starts (a
 * 30 s window); restarted on the same data folder, it delivers the order to
 * the partner exactly once, and a repeat of that webhook is a duplicate.
 */
const dirs: string[] = [];
const spawned: EventsDaemon[] = [];
let api: PartnerApi | undefined;

afterAll(async () => {
  for (const d of spawned) if (d.proc.exitCode === null && d.proc.signalCode === null) d.proc.kill("SIGKILL");
  await api?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function spawnDaemon(dir: string, env: Record<string, string>): EventsDaemon {
  const d = spawnEventsDaemon(dir, env);
  spawned.push(d);
  return d;
}

describe("kill -9 right after the daemon answered the webhook", () => {
  it("restarted on the same data folder, the order reaches the partner once; the webhook's repeat is a duplicate", async () => {
    api = await startPartnerApi({ port: 0, clientSecret: PARTNER_SECRET });
    const partner = api;
    const dir = mkdtempSync(path.join(tmpdir(), "conveyor-events-kill-"));
    dirs.push(dir);
    const stateDb = path.join(dir, "data", "state.db");
    const serviceDb = path.join(dir, "data", "embedded", "service.db");
    const env = { PARTNER_URL: partner.url };

    const first = spawnDaemon(dir, { ...env, EVENT_WINDOW: "30s" });
    const up = await first.up;
    const key = await until("the webhook endpoint's registration", () => read<{ key: string }>(stateDb, "SELECT key FROM daemon_webhooks")[0]?.key ?? null);
    const created = await fetch(`${up.service}/v3/orders`, { method: "POST", headers: { ...up.headers, "Content-Type": "application/json" }, body: JSON.stringify(newOrder("KILL-5001")) });
    expect(created.status, await created.clone().text()).toBeLessThan(300);

    // The service writes the attempt once the daemon's 2xx arrived: that is "answered".
    const answered = await until("the delivery answered 2xx", () => {
      const rows = read<{ msg_id: string; attempts: string }>(serviceDb, "SELECT msg_id, attempts FROM webhook_deliveries WHERE event_type LIKE '%order.created'");
      const ok = rows.find((r) => (JSON.parse(r.attempts) as Array<{ status: string }>).some((a) => a.status === "success"));
      return ok ?? null;
    });
    first.proc.kill("SIGKILL");
    await first.exited;

    expect(JSON.parse(answered.attempts)).toEqual([expect.objectContaining({ status: "success", http_status: 200 })]);
    expect(read<{ state: string }>(stateDb, "SELECT state FROM event_claims")).toEqual([{ state: "pending" }]);
    expect(read(stateDb, "SELECT id FROM runs")).toEqual([]);
    expect(partner.state.orders).toEqual([]);

    const second = spawnDaemon(dir, { ...env, EVENT_WINDOW: "500ms" });
    const restarted = await second.up;
    await until("the order at the partner", () => (partner.state.orders.length > 0 ? true : null));
    // A few seconds more: no second run, no second request.
    await new Promise((r) => setTimeout(r, 4_000));
    expect((partner.state.orders as Array<{ order_id: string }>).map((o) => o.order_id)).toEqual(["KILL-5001"]);
    const claims = read<{ state: string; run_id: string }>(stateDb, "SELECT state, run_id FROM event_claims");
    expect(claims).toEqual([{ state: "done", run_id: expect.any(String) }]);
    const run = (await (await fetch(`${restarted.url}/v3/automations/runs/${claims[0]?.run_id ?? ""}`, { headers: restarted.headers })).json()) as Record<string, unknown>;
    expect(run).toMatchObject({ trigger: "event", outcome: "success" });

    // The service's retry of the same delivery (same Webhook-Id, same body, signed anew) is answered duplicate.
    const [message] = read<{ payload: string }>(serviceDb, `SELECT payload FROM webhook_messages WHERE id = '${answered.msg_id}'`);
    const [endpoint] = read<{ secret: string }>(serviceDb, "SELECT secret FROM webhook_endpoints");
    const ts = Math.floor(Date.now() / 1000);
    const body = message?.payload ?? "";
    const again = await fetch(`${restarted.url}/v3/events/webhook/${key}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Webhook-Id": answered.msg_id, "Webhook-Timestamp": String(ts), "Webhook-Signature": signature(endpoint?.secret ?? "", answered.msg_id, ts, body) },
      body,
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ status: "duplicate" });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(partner.state.orders).toHaveLength(1);
    expect(read(stateDb, "SELECT state FROM event_claims")).toHaveLength(1);
    second.proc.kill("SIGKILL");
    await second.exited;
  }, 120_000);
});
