import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Automation } from "../../src/definition/index.js";
import type { Order } from "../../src/service/index.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { openOrderEnv, run, runLogs, seedOrder, type OrderEnv } from "../pipeline/orders/order-env.js";
import { filesContaining, loadSample } from "./sample-env.js";

/**
 * samples/order-push-http.json against the partner API stand-in: each paid,
 * unshipped order rendered by the sample's Twig template into one JSON
 * request, sent with an OAuth token. An order the partner answers 500 makes
 * the run partial and is the only one the next run sends again. The live runs
 * are diff runs, as scheduled runs are once a snapshot exists (runs.md).
 */
const SECRET = "push-Client-Secret-7730";

const order = (ordernumber: string, lastname: string, extra: Partial<Order> = {}): Order => ({
  ordernumber,
  channel: "web",
  dateutc: "2026-03-01 09:30:00",
  total: "58.00",
  paymentstatus: "COMPLETE",
  shippingstatus: "INCOMPLETE",
  shipping: { firstname: "Ada", lastname, street1: "1 Quay Street", city: "Dublin", postalcode: "D01", country: "ie" },
  items: [
    { sku: "PA-1004", title: "Box cutter, 18 mm", quantity: "2", price: "7.90" },
    { sku: "PA-1002", title: 'Stretch film "500"\n6 rolls', quantity: "1", price: "42.20" },
  ],
  ...extra,
});

describe("samples/order-push-http.json", () => {
  let env: OrderEnv;
  let api: PartnerApi;
  const failOrders = ["WEB-3002"];
  const oids = new Map<string, string>();

  beforeAll(async () => {
    env = await openOrderEnv();
    api = await startPartnerApi({ port: 0, clientSecret: SECRET, failOrders });
    for (const [number, lastname] of [["WEB-3001", `O'Neil <&> 🚚`], ["WEB-3002", "Byrne"], ["WEB-3003", "Walsh"]] as const) oids.set(number, await seedOrder(env, order(number, lastname)));
    // Not paid: the sample's search leaves it out.
    await seedOrder(env, order("WEB-3004", "Kelly", { paymentstatus: "INCOMPLETE" }));
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  const sample = (): Promise<Automation> => loadSample("order-push-http.json", { "partner url": api.url, "client secret": SECRET });

  it("debug run: renders the three requests, sends none", async () => {
    const record = await run(env, await sample(), "debug");
    expect(record.error).toBeNull();
    expect(record.counts).toMatchObject({ rows: 3, row_errors: 0 });
    expect(api.state.orders).toEqual([]);
    expect(api.state.refusedOrders).toEqual([]);
  });

  it("live run: one JSON request per order, parsed back whole; the refused order makes the run partial", async () => {
    const record = await run(env, await sample(), "prod", { diff: true });
    expect(record.outcome).toBe("partial");
    expect(record.counts).toMatchObject({ rows: 3, failed: 1 });
    const received = api.state.orders as Array<Record<string, unknown>>;
    expect(received.map((o) => o.order_id).sort()).toEqual(["WEB-3001", "WEB-3003"]);
    expect(received.find((o) => o.order_id === "WEB-3001")).toEqual({
      order_id: "WEB-3001",
      channel: "web",
      placed_at: "2026-03-01T09:30:00+00:00",
      ship_to: { name: `Ada O'Neil <&> 🚚`, company: "", street: ["1 Quay Street", ""], city: "Dublin", postal_code: "D01", country: "IE" },
      service: "Ground",
      lines: [
        { sku: "PA-1004", description: "Box cutter, 18 mm", quantity: 2, unit_price: "7.90" },
        { sku: "PA-1002", description: 'Stretch film "500"\n6 rolls', quantity: 1, unit_price: "42.20" },
      ],
    });
    expect(api.state.refusedOrders.map((o) => (o as Record<string, unknown>).order_id)).toContain("WEB-3002");
    const logs = await runLogs(env, record.id);
    // The run's log records name each order by its oid, the refused one with the partner's answer.
    const refused = logs.filter((l) => l.result === "error");
    expect(refused.map((l) => l.identifier)).toEqual([oids.get("WEB-3002")]);
    expect(JSON.stringify(refused[0]?.message)).toMatch(/500.*WEB-3002 could not be stored/);
    expect(logs.filter((l) => l.result === "success").map((l) => l.identifier).sort()).toEqual([oids.get("WEB-3001"), oids.get("WEB-3003")].sort());
  });

  it("the next run sends the refused order again, and only it", async () => {
    failOrders.length = 0;
    const before = api.state.orders.length;
    const record = await run(env, await sample(), "prod", { diff: true });
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    const sent = (api.state.orders as Array<Record<string, unknown>>).slice(before);
    expect(sent.map((o) => o.order_id)).toEqual(["WEB-3002"]);
    // One token for all three runs' requests: it was kept, sealed, in the automation's metadata.
    expect(api.state.tokenRequests).toBe(1);
    expect(await filesContaining(env.settings.dataDir, SECRET)).toEqual([]);
  });
});
