import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startHarness, waitFor, type Harness } from "./helpers.js";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: records every request, answers with the next queued status (204 when none). */
class Receiver {
  readonly received: Received[] = [];
  readonly statuses: number[] = [];
  delayMs = 0;
  private server: Server | null = null;
  port = 0;

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        this.received.push({ headers: req.headers, body });
        const status = this.statuses.shift() ?? 204;
        setTimeout(() => res.writeHead(status).end(status === 204 ? undefined : `answer ${status}`), this.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  events(): Array<{ type: string; data: Record<string, unknown> }> {
    return this.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
  }
}

/** The seed's rule, computed here independently of the service's code. */
function verifies(r: Received, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${String(r.headers["webhook-id"])}.${String(r.headers["webhook-timestamp"])}.${r.body}`).digest("base64");
  return r.headers["webhook-signature"] === `v1,${expected}`;
}

const ORDER = { channel: "shop", ordernumber: "W1", total: "10", items: [{ sku: "S1", price: "10", quantity: "1" }] };

async function endpoint(h: Harness, url: string, eventTypes: string[]): Promise<{ id: string; secret: string }> {
  const res = await h.json("POST", "/v3/webhooks/endpoints", { url, event_types: eventTypes, description: "test receiver" });
  expect(res.status).toBe(200);
  return res.body as { id: string; secret: string };
}

describe("embedded service: webhooks (seed parts 2.5, 4.5, 6)", () => {
  let h: Harness;
  const receiver = new Receiver();
  let url = "";

  beforeAll(async () => {
    url = await receiver.start();
    h = await startHarness({ webhookRetryDelaysMs: [100, 100] });
  });
  afterAll(async () => {
    await h.close();
    await receiver.stop();
  });
  afterEach(async () => {
    for (const e of (await h.json("GET", "/v3/webhooks/endpoints")).body.endpoints as Array<{ id: string }>) await h.json("DELETE", `/v3/webhooks/endpoints/${e.id}`);
    receiver.received.length = 0;
    receiver.statuses.length = 0;
    receiver.delayMs = 0;
  });

  it("signs and sends the subscribed order events in the CloudEvents envelope; the secret is shown once", async () => {
    const ep = await endpoint(h, url, ["order.created", "order.status_changed", "order.fulfilled"]);
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const shown = await h.json("GET", `/v3/webhooks/endpoints/${ep.id}`);
    expect(shown.body).toMatchObject({ id: ep.id, url, event_types: ["order.created", "order.status_changed", "order.fulfilled"], enabled: true });
    expect(JSON.stringify(shown.body)).not.toContain(ep.secret);
    expect(JSON.stringify((await h.json("GET", "/v3/webhooks/endpoints")).body)).not.toContain(ep.secret);

    const created = await h.json("POST", "/v3/orders", ORDER);
    const oid = created.body.oid as number;
    await waitFor(async () => (receiver.received.length >= 1 ? true : undefined), "order.created delivery");
    const [first] = receiver.received;
    if (!first) throw new Error("nothing received");
    expect(verifies(first, ep.secret)).toBe(true);
    expect(first.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]+$/);
    expect(Math.abs(Number(first.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    expect(first.headers["content-type"]).toBe("application/json");
    const envelope = JSON.parse(first.body) as Record<string, unknown>;
    expect(envelope).toEqual({
      specversion: "1.0",
      type: "sds.order.created",
      source: `/accounts/${h.svc.apiUser}`,
      id: expect.stringMatching(/^evt_[0-9a-f]+$/),
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
      datacontenttype: "application/json",
      data: { oid, channel: "shop", status: expect.any(String), resource_type: "order", resource_id: String(oid) },
    });

    // Not subscribed to order.updated: a status change and the shipment bring exactly the two subscribed events.
    expect((await h.json("PATCH", `/v3/orders/${oid}`, { status: "READY", shippingstatus: "COMPLETE" })).status).toBe(200);
    await waitFor(async () => (receiver.received.length >= 3 ? true : undefined), "status and fulfilment deliveries");
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.events().map((e) => e.type).sort()).toEqual(["sds.order.created", "sds.order.fulfilled", "sds.order.status_changed"]);
    expect(receiver.events().find((e) => e.type === "sds.order.status_changed")?.data.status).toBe("READY");
    expect(receiver.received.every((r) => verifies(r, ep.secret))).toBe(true);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(3);
  });

  it("order.updated fires for a change, not for an update that changes nothing", async () => {
    await endpoint(h, url, ["order.updated"]);
    const { oid } = (await h.json("POST", "/v3/orders", { ...ORDER, ordernumber: "W0" })).body as { oid: number };
    for (let i = 0; i < 2; i++) expect((await h.json("PATCH", `/v3/orders/${oid}`, { status: "PENDING", shippingcarrier: "DHL" })).status).toBe(200);
    await waitFor(async () => (receiver.received.length ? true : undefined), "order.updated");
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.events().map((e) => e.type)).toEqual(["sds.order.updated"]);
  });

  it("refuses a bad endpoint naming every problem: plain http elsewhere than localhost, announced and unknown types", async () => {
    const res = await h.json("POST", "/v3/webhooks/endpoints", { url: "http://example.com/hook", event_types: ["product.created", "order.nope"], enabled: "yes" });
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.body);
    expect(text).toContain("https://");
    expect(text).toContain("product.created is announced but cannot be subscribed to yet");
    expect(text).toContain('\\"order.nope\\" is not an event type');
    expect(text).toContain("enabled must be true or false");
    expect((await h.json("POST", "/v3/webhooks/endpoints", { url })).status).toBe(400);
    const types = await h.json("GET", "/v3/webhooks/event-types");
    const categories = types.body.categories as Array<{ name: string; event_types: Array<{ type: string; enabled: boolean }> }>;
    expect(categories.map((c) => c.name)).toEqual(["order", "product"]);
    expect(categories[1]?.event_types.every((t) => !t.enabled)).toBe(true);
    expect((await h.json("GET", "/v3/webhooks/endpoints/ep_0")).status).toBe(404);
  });

  it("retries a failing receiver with backoff; gives up after the schedule; a retry by hand sends it again", async () => {
    const ep = await endpoint(h, url, ["order.created"]);
    receiver.statuses.push(500, 503);
    await h.json("POST", "/v3/orders", { ...ORDER, ordernumber: "W2" });
    const logs = async (): Promise<Array<{ id: string; status: string; attempts: Array<{ status: string; http_status: number | null }> }>> =>
      (await h.json("GET", `/v3/webhooks/endpoints/${ep.id}/logs`)).body.deliveries as Array<{ id: string; status: string; attempts: Array<{ status: string; http_status: number | null }> }>;
    const delivered = await waitFor(async () => (await logs()).find((d) => d.status === "success"), "the third attempt");
    expect(delivered.attempts.map((a) => `${a.status} ${a.http_status}`)).toEqual(["failed 500", "failed 503", "success 204"]);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);

    receiver.statuses.push(500, 500, 500);
    await h.json("POST", "/v3/orders", { ...ORDER, ordernumber: "W3" });
    const failed = await waitFor(async () => (await logs()).find((d) => d.status === "failed"), "the delivery to fail for good");
    expect(failed.attempts).toHaveLength(3);
    expect((await h.json("GET", `/v3/webhooks/endpoints/${ep.id}/logs?status=failed`)).body.total).toBe(1);
    expect((await h.json("POST", `/v3/webhooks/deliveries/${delivered.id}/retry`)).status).toBe(409);
    expect((await h.json("POST", "/v3/webhooks/deliveries/nonsense/retry")).status).toBe(400);
    const retried = await h.json("POST", `/v3/webhooks/deliveries/${failed.id}/retry`);
    expect(retried.body).toMatchObject({ id: failed.id, status: "queued" });
    const again = await waitFor(async () => (await logs()).find((d) => d.id === failed.id && d.status === "success"), "the retried delivery");
    expect(again.attempts.map((a) => a.status)).toEqual(["failed", "failed", "failed", "success"]);

    const stats = await h.json("GET", "/v3/webhooks/statistics?period=1h");
    expect(stats.body).toMatchObject({ period: "1h", total: 2, success: 2, failed: 0, success_rate: 1, by_event_type: { "order.created": { total: 2, success: 2 } } });
    expect((await h.json("GET", "/v3/webhooks/statistics?period=2y")).status).toBe(400);
    expect((await h.json("GET", `/v3/webhooks/endpoints/${ep.id}`)).body.health).toMatchObject({ total: 2, success: 2 });
  });

  it("rotate-secret: deliveries after it verify with the new secret only; a disabled endpoint gets nothing; delete removes it", async () => {
    const ep = await endpoint(h, url, ["order.created"]);
    const rotated = await h.json("POST", `/v3/webhooks/endpoints/${ep.id}/rotate-secret`);
    const secret = rotated.body.secret as string;
    expect(secret).not.toBe(ep.secret);
    await h.json("POST", "/v3/orders", { ...ORDER, ordernumber: "W4" });
    const [r] = await waitFor(async () => (receiver.received.length ? receiver.received : undefined), "a delivery");
    if (!r) throw new Error("nothing received");
    expect(verifies(r, secret)).toBe(true);
    expect(verifies(r, ep.secret)).toBe(false);

    expect((await h.json("PATCH", `/v3/webhooks/endpoints/${ep.id}`, { enabled: false, colour: "red" })).status).toBe(400);
    expect((await h.json("PATCH", `/v3/webhooks/endpoints/${ep.id}`, { enabled: false })).body).toMatchObject({ enabled: false });
    await h.json("POST", "/v3/orders", { ...ORDER, ordernumber: "W5" });
    await new Promise((res) => setTimeout(res, 300));
    expect(receiver.received).toHaveLength(1);
    expect((await h.json("DELETE", `/v3/webhooks/endpoints/${ep.id}`)).status).toBe(200);
    expect((await h.json("GET", `/v3/webhooks/endpoints/${ep.id}`)).status).toBe(404);
  });

  it("test: the receiver's answer within 5 s, otherwise queued and delivered later", async () => {
    const ep = await endpoint(h, url, ["order.created"]);
    receiver.statuses.push(202);
    const quick = await h.json("POST", `/v3/webhooks/endpoints/${ep.id}/test`, { event_type: "order.status_changed" });
    expect(quick.body).toMatchObject({ status: "success", http_status: 202, response_body: "answer 202" });
    expect(receiver.events()[0]?.type).toBe("sds.order.status_changed");
    expect(verifies(receiver.received[0] as Received, ep.secret)).toBe(true);

    receiver.delayMs = 6_000;
    const slow = await h.json("POST", `/v3/webhooks/endpoints/${ep.id}/test`, {});
    expect(slow.body).toMatchObject({ status: "queued" });
    await waitFor(async () => ((await h.json("GET", `/v3/webhooks/endpoints/${ep.id}/logs`)).body.deliveries as Array<{ id: string; status: string }>).find((d) => d.id === slow.body.id && d.status === "success"), "the slow test delivery", 10_000);
  }, 20_000);
});

describe("embedded service: webhooks across a restart", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-webhooks-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a delivery owed when the service stopped is sent after it starts again", async () => {
    const receiver = new Receiver();
    const url = await receiver.start();
    const port = receiver.port;
    await receiver.stop();
    // The receiver is down: the first attempt fails, the next waits longer than the service lives.
    const first = await startHarness({ webhookRetryDelaysMs: [60_000] }, dir);
    const ep = await endpoint(first, url, ["order.created"]);
    await first.json("POST", "/v3/orders", ORDER);
    await waitFor(async () => (((await first.json("GET", `/v3/webhooks/endpoints/${ep.id}/logs`)).body.deliveries as Array<{ attempts: unknown[] }>)[0]?.attempts.length ? true : undefined), "the failed first attempt");
    await first.close();

    await receiver.start(port);
    const second = await startHarness({ now: () => Date.now() + 120_000 }, dir);
    try {
      await waitFor(async () => (receiver.received.length ? true : undefined), "the owed delivery");
      expect(verifies(receiver.received[0] as Received, ep.secret)).toBe(true);
      const [d] = (await second.json("GET", `/v3/webhooks/endpoints/${ep.id}/logs`)).body.deliveries as Array<{ status: string; attempts: Array<{ status: string; error?: string }> }>;
      expect(d?.status).toBe("success");
      expect(d?.attempts.map((a) => a.status)).toEqual(["failed", "success"]);
      expect(d?.attempts[0]?.error).toMatch(/ECONNREFUSED/);
    } finally {
      await second.close();
      await receiver.stop();
    }
  });
});
