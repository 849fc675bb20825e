import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { DestinationStream } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { signature } from "../../src/embedded/webhook-dispatch.js";
import { freshSchema } from "../cluster/pg-env.js";
import { startTestDaemon, type TestDaemon } from "../daemon/daemon-harness.js";

/** An order export to the service's storage that runs on `order.created`; its schedule is far off. */
const DEFINITION = {
  name: "Orders on events",
  active: true,
  schedule: "0 3 1 1 *",
  events: ["order.created"],
  type: "orders",
  action: "export",
  connection: { type: "sdsftp", path: "outbox" },
  file_configs: [{ name: "orders_{{RUN_ID}}.csv", field_map: { ordernumber: "OrderNumber", channel: "Channel" } }],
};

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("runs on events, on the embedded default", () => {
  let t: TestDaemon;
  let service: (method: string, url: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;
  const lines: string[] = [];
  const sink: DestinationStream = { write: (line: string) => void lines.push(line) };

  beforeAll(async () => {
    t = await startTestDaemon({ definitions: { "orders-events.json": DEFINITION }, env: { CONVEYOR_EVENT_WINDOW: "300ms" }, daemon: { logger: createLogger({ level: "debug", destination: sink }) } });
    const base = t.daemon.embedded?.url ?? "";
    service = async (method, url, body) => {
      const res = await fetch(`${base}${url}`, { method, headers: { ...t.headers, ...(body === undefined ? {} : { "Content-Type": "application/json" }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
  });
  afterAll(async () => t.close());

  const registration = () => until("the endpoint's registration", () => t.daemon.events.store.registration("demo"));
  const outbox = () => path.join(t.settings.storage, "demo", "outbox");
  const order = async (n: string): Promise<void> => {
    const created = await service("POST", "/v3/orders", {
      ordernumber: n,
      channel: "shop",
      dateutc: "2026-03-01 10:00:00",
      total: "10.00",
      paymentstatus: "COMPLETE",
      items: [{ sku: "A1", title: "Alpha", price: "10.00", quantity: "1" }],
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
  };
  /** The run that settled the claim of an event naming order `n`. */
  const deliveredRun = async (n: string) => {
    const done = await until(`order ${n} delivered`, async () => {
      // A file still being uploaded is a hidden `.name.part`, renamed away as soon as it is whole: only delivered files are read.
      const delivered = (await readdir(outbox()).catch(() => [] as string[])).filter((file) => !file.startsWith("."));
      for (const file of delivered) if ((await readFile(path.join(outbox(), file), "utf8")).includes(n)) return file;
      return null;
    });
    const claims = await until("the claims settled", async () => {
      const all = await t.daemon.events.store.claims();
      return all.length > 0 && all.every((c) => c.state === "done") ? all : null;
    });
    return { file: done, claims };
  };

  it("registers the endpoint, takes the webhook, and runs the export once with trigger event", async () => {
    const row = await registration();
    const listed = await service("GET", `/v3/webhooks/endpoints/${row.endpointId}`);
    expect(listed.body).toMatchObject({ url: `${t.daemon.url}/v3/events/webhook/${row.key}`, event_types: ["order.created"], enabled: true, description: "Conveyor daemon" });
    expect(row.secret).toMatch(/^enc:v1:/);

    const started = Date.now();
    await order("EV-1001");
    const { claims } = await deliveredRun("EV-1001");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(claims).toHaveLength(1);
    const run = await t.daemon.store.getRun(claims[0]?.runId ?? "");
    expect(run).toMatchObject({ trigger: "event", outcome: "success", diff: true });
    const metrics = await t.request("GET", "/metrics");
    expect(metrics.text).toContain('conveyor_webhooks_total{result="accepted"} 1');
  });

  it("refuses forged, stale, oversized, malformed and unknown-key deliveries; answers replays 2xx and runs nothing", async () => {
    const row = await registration();
    const known = await t.daemon.events.registrar.secretsFor(row.key);
    const secret = known?.secrets[0] ?? "";
    const [first] = await t.daemon.events.store.claims();
    const logs = await service("GET", `/v3/webhooks/endpoints/${row.endpointId}/logs`);
    const deliveries = logs.body.deliveries as Array<{ msg_id: string }>;
    const realMsg = deliveries[0]?.msg_id ?? "";
    const runsBefore = (await t.daemon.store.listRuns({})).length;

    const post = async (body: string, o: { msg?: string; ts?: number; sig?: string; key?: string } = {}) => {
      const msg = o.msg ?? "msg_test";
      const ts = o.ts ?? Math.floor(Date.now() / 1000);
      const res = await fetch(`${t.daemon.url}/v3/events/webhook/${o.key ?? row.key}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Webhook-Id": msg, "Webhook-Timestamp": String(ts), "Webhook-Signature": o.sig ?? signature(secret, msg, ts, body) },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    const envelope = (id: string) => JSON.stringify({ specversion: "1.0", type: "sds.order.created", source: "/accounts/demo", id, time: new Date().toISOString(), datacontenttype: "application/json", data: { oid: 99, resource_type: "order", resource_id: "99" } });

    const forged = await post(envelope("evt_forged"), { sig: signature(`whsec_${Buffer.from("x".repeat(24)).toString("base64")}`, "msg_test", Math.floor(Date.now() / 1000), envelope("evt_forged")) });
    expect(forged.status).toBe(401);
    expect(forged.text).not.toContain(secret);
    const stale = await post(envelope("evt_stale"), { ts: Math.floor(Date.now() / 1000) - 600 });
    expect(stale.status).toBe(400);
    expect(stale.text).toContain("Webhook-Timestamp");
    expect((await post("x".repeat(300 * 1024))).status).toBe(413);
    expect((await post("not json")).status).toBe(400);
    expect((await post(envelope("evt_unknown"), { key: "nope" })).status).toBe(404);
    const replayEvent = await post(envelope(first?.eventId ?? ""), { msg: "msg_new" });
    expect(replayEvent).toMatchObject({ status: 200 });
    expect(replayEvent.text).toContain("duplicate");
    const replayMsg = await post(envelope("evt_brand_new"), { msg: realMsg });
    expect(replayMsg.text).toContain("duplicate");

    expect(await t.daemon.events.store.claims()).toHaveLength(1);
    expect(t.daemon.events.coalescer.isArmed(first?.automation ?? "")).toBe(false);
    await new Promise((r) => setTimeout(r, 500));
    expect((await t.daemon.store.listRuns({})).length).toBe(runsBefore);
    const metrics = (await t.request("GET", "/metrics")).text;
    for (const line of ['result="bad_signature"} 1', 'result="stale"} 1', 'result="too_large"} 1', 'result="malformed"} 1', 'result="unknown_key"} 1', 'result="duplicate"} 2']) {
      expect(metrics).toContain(`conveyor_webhooks_total{${line}`);
    }
  });

  it("registers again when the endpoint was deleted at the service, and events flow again", async () => {
    const before = await registration();
    expect((await service("DELETE", `/v3/webhooks/endpoints/${before.endpointId}`)).status).toBe(200);
    const report = await t.daemon.events.registrar.check();
    expect(report.created).toEqual(["demo"]);
    const after = await registration();
    expect(after.endpointId).not.toBe(before.endpointId);
    expect(after.key).not.toBe(before.key);
    expect(await t.daemon.events.registrar.secretsFor(before.key)).toBeNull();
    await order("EV-1002");
    const { claims } = await deliveredRun("EV-1002");
    expect(claims).toHaveLength(2);
    const run = await t.daemon.store.getRun(claims[1]?.runId ?? "");
    expect(run).toMatchObject({ trigger: "event", outcome: "success" });
    // Run diff: the second run sent only the new order.
    const second = await readFile(path.join(outbox(), `orders_${run?.id ?? ""}.csv`), "utf8");
    expect(second).toContain("EV-1002");
    expect(second).not.toContain("EV-1001");
  });

  it("rotates the signing secret on request: the old one passes only for deliveries of the next 5 minutes, and is never shown", async () => {
    const row = await registration();
    const old = (await t.daemon.events.registrar.secretsFor(row.key))?.secrets[0] ?? "";
    expect(old).not.toBe("");
    const rotated = await t.request("POST", "/v3/automations/events/rotate-secret");
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body).toMatchObject({ result: "success", endpoint: row.endpointId });
    const known = (await t.daemon.events.registrar.secretsFor(row.key))?.secrets ?? [];
    expect(known).toHaveLength(2);
    expect(known[1]).toBe(old);
    const fresh = known[0] ?? "";
    expect(fresh).not.toBe(old);
    for (const text of [rotated.text, lines.join("\n")]) {
      expect(text).not.toContain(old);
      expect(text).not.toContain(fresh);
    }
    expect(lines.some((l) => l.includes("webhook_secret_rotated"))).toBe(true);
    const stored = await t.daemon.events.store.registration("demo");
    expect(stored?.secret).toMatch(/^enc:v1:/);
    expect(stored?.previousSecret).toMatch(/^enc:v1:/);

    // The service signs with the new secret at once: the next order still runs the export.
    await order("EV-1003");
    const { claims } = await deliveredRun("EV-1003");
    expect(claims).toHaveLength(3);

    const envelope = (id: string) => JSON.stringify({ specversion: "1.0", type: "sds.order.created", source: "/accounts/demo", id, time: new Date().toISOString(), datacontenttype: "application/json", data: { oid: 98, resource_type: "order", resource_id: "98" } });
    const deliver = async (secret: string, id: string): Promise<number> => {
      const body = envelope(id);
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(`${t.daemon.url}/v3/events/webhook/${row.key}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Webhook-Id": `msg_${id}`, "Webhook-Timestamp": String(ts), "Webhook-Signature": signature(secret, `msg_${id}`, ts, body) },
        body,
      });
      await res.text();
      return res.status;
    };
    // A delivery the service signed just before the switch still passes.
    expect(await deliver(old, "evt_signed_before")).toBe(200);
    // Five minutes on, the old secret passes nothing: a leaked one is worthless.
    const current = await t.daemon.events.store.registration("demo");
    if (!current) throw new Error("the registration is gone");
    await t.daemon.events.store.saveRegistration({ ...current, updated: new Date(Date.now() - 6 * 60_000).toISOString() });
    expect(await t.daemon.events.registrar.secretsFor(row.key)).toMatchObject({ secrets: [fresh] });
    expect(await deliver(old, "evt_leaked")).toBe(401);
    expect(await deliver(fresh, "evt_after")).toBe(200);
    // A patch of the endpoint after the window does not bring the old secret back.
    expect((await service("PATCH", `/v3/webhooks/endpoints/${row.endpointId}`, { enabled: false })).status).toBe(200);
    expect((await t.daemon.events.registrar.check()).updated).toEqual(["demo"]);
    expect((await t.daemon.events.store.registration("demo"))?.previousSecret).toBeNull();

    // The service refuses (its endpoint is gone): a 502 that says to send it again, and the stored secret is kept.
    const kept = await t.daemon.events.store.registration("demo");
    expect((await service("DELETE", `/v3/webhooks/endpoints/${row.endpointId}`)).status).toBe(200);
    const refused = await t.request("POST", "/v3/automations/events/rotate-secret");
    expect(refused.status).toBe(502);
    expect(refused.text).toContain("send the request again");
    expect((await t.daemon.events.store.registration("demo"))?.secret).toBe(kept?.secret);

    await t.daemon.events.store.deleteRegistration("demo");
    const none = await t.request("POST", "/v3/automations/events/rotate-secret");
    expect(none.status).toBe(404);
    expect(none.text).toContain("no webhook endpoint");
    const anonymous = await fetch(`${t.daemon.url}/v3/automations/events/rotate-secret`, { method: "POST" });
    expect(anonymous.status).toBe(401);
  });
});

describe("runs on events, with PostgreSQL state", () => {
  let t: TestDaemon;
  let pg: ReturnType<typeof freshSchema>;

  beforeAll(async () => {
    pg = freshSchema("ev");
    t = await startTestDaemon({ definitions: { "orders-events.json": DEFINITION }, env: { CONVEYOR_EVENT_WINDOW: "1s", CONVEYOR_DATABASE_URL: pg.url } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await pg.drop();
  });

  it("coalesces a burst of orders into fewer runs than orders, each event taken once", async () => {
    await until("the endpoint's registration", () => t.daemon.events.store.registration("demo"));
    const base = t.daemon.embedded?.url ?? "";
    const numbers = Array.from({ length: 6 }, (_, i) => `PG-${2000 + i}`);
    for (const n of numbers) {
      const res = await fetch(`${base}/v3/orders`, {
        method: "POST",
        headers: { ...t.headers, "Content-Type": "application/json" },
        body: JSON.stringify({ ordernumber: n, channel: "shop", dateutc: "2026-03-01 10:00:00", total: "1.00", paymentstatus: "COMPLETE", items: [{ sku: "A1", title: "Alpha", price: "1.00", quantity: "1" }] }),
      });
      expect(res.status).toBeLessThan(300);
    }
    const claims = await until(
      "every claim done",
      async () => {
        const all = await t.daemon.events.store.claims();
        return all.length === numbers.length && all.every((c) => c.state === "done") ? all : null;
      },
      30_000,
    );
    const runs = new Set(claims.map((c) => c.runId));
    expect(runs.size).toBeLessThan(numbers.length);
    for (const id of runs) expect(await t.daemon.store.getRun(id ?? "")).toMatchObject({ trigger: "event", outcome: "success" });
    const outbox = path.join(t.settings.storage, "demo", "outbox");
    const text = (await Promise.all((await readdir(outbox)).map((f) => readFile(path.join(outbox, f), "utf8")))).join("\n");
    for (const n of numbers) expect(text.split(n).length - 1).toBe(1);
  }, 60_000);
});
