import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Automation } from "../../src/definition/index.js";
import { runAutomation } from "../../src/pipeline/run.js";
import type { Order } from "../../src/service/index.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { openOrderEnv, seedOrder, type OrderEnv } from "../pipeline/orders/order-env.js";
import { loadSample } from "./sample-env.js";

/**
 * samples/order-created-http.json against the partner API stand-in: an event
 * run (what the daemon starts on `order.created`) sends exactly the new
 * orders it names; the catch-up diff run then sends only the order whose
 * event never came.
 */
const SECRET = "created-Client-Secret-4410";

const order = (ordernumber: string): Order => ({
  ordernumber,
  channel: "web",
  dateutc: "2026-03-02 08:00:00",
  total: "7.90",
  paymentstatus: "COMPLETE",
  shippingstatus: "INCOMPLETE",
  shipping: { firstname: "Ada", lastname: "Walsh", street1: "1 Quay Street", city: "Dublin", postalcode: "D01", country: "ie" },
  items: [{ sku: "PA-1004", title: "Box cutter, 18 mm", quantity: "1", price: "7.90" }],
});

describe("samples/order-created-http.json", () => {
  let env: OrderEnv;
  let api: PartnerApi;
  const oids: string[] = [];

  beforeAll(async () => {
    env = await openOrderEnv();
    api = await startPartnerApi({ port: 0, clientSecret: SECRET });
    for (const n of ["WEB-4001", "WEB-4002", "WEB-4003"]) oids.push(await seedOrder(env, order(n)));
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  const sample = (): Promise<Automation> => loadSample("order-created-http.json", { "partner url": api.url, "client secret": SECRET });
  const received = (): unknown[] => (api.state.orders as Array<Record<string, unknown>>).map((o) => o.order_id);

  it("runs on order.created with no schedule", async () => {
    const a = await sample();
    expect(a.events).toEqual(["order.created"]);
    expect(a.schedule).toBeUndefined();
  });

  it("an event run sends only the orders its events name", async () => {
    const a = await sample();
    const record = await runAutomation(env.worker.env, {
      key: a.slug, automation: a, mode: "prod", trigger: "event", diff: true, force: false, notify: false, email: null,
      events: { ids: ["evt_1", "evt_3"], orders: [oids[0] ?? "", oids[2] ?? ""] },
    });
    expect(record).toMatchObject({ outcome: "success", trigger: "event", events: ["evt_1", "evt_3"] });
    expect(received().sort()).toEqual(["WEB-4001", "WEB-4003"]);
  });

  it("the catch-up diff run sends the order whose event was missed, and nothing twice", async () => {
    const a = await sample();
    const record = await runAutomation(env.worker.env, { key: a.slug, automation: a, mode: "prod", trigger: "schedule", diff: true, force: false, notify: false, email: null });
    expect(record.outcome).toBe("success");
    expect(received().sort()).toEqual(["WEB-4001", "WEB-4002", "WEB-4003"]);
  });
});
