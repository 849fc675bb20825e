import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Automation } from "../../src/definition/index.js";
import { readPointers } from "../../src/pointers/index.js";
import type { Order } from "../../src/service/index.js";
import { startPartnerApi, type PartnerApi } from "../../samples/partner-api.js";
import { allOrders, openOrderEnv, orderByNumber, run, seedOrder, type OrderEnv } from "../pipeline/orders/order-env.js";
import { loadSample } from "./sample-env.js";

/**
 * samples/tracking-api-http.json against the partner API stand-in: shipments
 * changed since the pointer `since`, read page by page with an OAuth token,
 * become tracking numbers on their orders. The pointer moves to the newest
 * `updated_at` read, only when a live run commits, and the next request asks
 * from there.
 */
type Shipment = Record<string, string>;
const shipmentsOf = (o: Order): Shipment[] => (o.shipments as Shipment[] | undefined) ?? [];

describe("samples/tracking-api-http.json", () => {
  let env: OrderEnv;
  let api: PartnerApi;
  const shipped = ["WEB-2001", "WEB-2002", "WEB-2003"];

  beforeAll(async () => {
    env = await openOrderEnv();
    api = await startPartnerApi({ port: 0, shipmentOrderIds: shipped, pageSize: 2 });
    for (const ordernumber of ["WEB-2001", "WEB-2002", "WEB-2003", "WEB-2004"]) {
      await seedOrder(env, { ordernumber, channel: "web", total: "10.00", shippingstatus: "INCOMPLETE", items: [{ sku: "PA-1004", quantity: "1" }] });
    }
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await env?.close();
  });

  const sample = (): Promise<Automation> => loadSample("tracking-api-http.json", { "partner url": api.url });
  const asked = (): string[] =>
    api.state.requests.filter((r) => r.url.startsWith("/v1/shipments")).map((r) => new URL(r.url, api.url).searchParams.get("updated_since") ?? "");
  const since = async (): Promise<string | undefined> => (await readPointers(env.worker.env.store, (await sample()).slug)).since;

  it("debug run: every page read from the initial pointer, three updates planned, the pointer and the orders untouched", async () => {
    const before = await allOrders(env);
    const record = await run(env, await sample(), "debug");
    expect(record.error).toBeNull();
    expect(record.counts).toMatchObject({ rows: 3, row_errors: 0, update: 3 });
    // Two pages of two and one, both asked from the rule's initial value.
    expect(asked()).toEqual(["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"]);
    expect(await since()).toBeUndefined();
    expect(await allOrders(env)).toEqual(before);
  });

  it("live run: tracking numbers on the orders, the pointer at the newest updated_at read", async () => {
    api.state.requests.length = 0;
    const record = await run(env, await sample(), "prod");
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ rows: 3, update: 3, failed: 0 });
    const first = await orderByNumber(env, "WEB-2001");
    expect(first.shippingstatus).toBe("COMPLETE");
    expect(shipmentsOf(first)).toEqual([expect.objectContaining({ shiptracking: "1Z999AA100001000", shipcarrier: "UPS" })]);
    expect(shipmentsOf(await orderByNumber(env, "WEB-2003"))).toEqual([expect.objectContaining({ shipcarrier: "FEDEX" })]);
    expect(await since()).toBe("2026-03-01T11:00:00.000Z");
  });

  it("the next run asks only for what changed since, and moves the pointer on", async () => {
    shipped.push("WEB-2004");
    api.state.requests.length = 0;
    const record = await run(env, await sample(), "prod");
    expect(record.error).toBeNull();
    expect(asked()).toEqual(["2026-03-01T11:00:00.000Z"]);
    expect(record.counts).toMatchObject({ rows: 1, update: 1 });
    expect(shipmentsOf(await orderByNumber(env, "WEB-2004"))).toEqual([expect.objectContaining({ shiptracking: "1Z999AA100001003" })]);
    expect(await since()).toBe("2026-03-01T12:00:00.000Z");
  });

  it("a run that fails leaves the pointer, and the run after it asks for the same range", async () => {
    shipped.push("WEB-2005");
    const failing = await loadSample("tracking-api-http.json", { "partner url": api.url, "client secret": "wrong-secret" });
    // A fresh client id: the token cached in metadata belongs to the right secret and would still work.
    const oauth = failing.connection?.oauth;
    if (oauth) oauth.client_id = "conveyor-demo-2";
    const failed = await run(env, failing, "prod");
    expect(failed.outcome).toBe("failed");
    expect(await since()).toBe("2026-03-01T12:00:00.000Z");
    api.state.requests.length = 0;
    const again = await run(env, await sample(), "prod");
    expect(again.error).toBeNull();
    expect(asked()).toEqual(["2026-03-01T12:00:00.000Z"]);
    // WEB-2005 is not in the service: the sample has no create, so it is skipped, and still read.
    expect(again.counts).toMatchObject({ rows: 1, skipped: 1 });
    expect(await since()).toBe("2026-03-01T13:00:00.000Z");
  });
});
