import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_ORDERS_PER_QUERY, eventSearches } from "../../../src/pipeline/export/orders.js";
import { runAutomation } from "../../../src/pipeline/run.js";
import type { RunEvents } from "../../../src/daemon/types.js";
import type { Order } from "../../../src/service/index.js";
import type { RunRecord } from "../../../src/state/index.js";
import { parseSearch } from "../../../src/search/index.js";
import type { Automation } from "../../../src/definition/index.js";
import { runJson } from "../../../src/cli-output/summary.js";
import { triggerText } from "../../../src/commands/runs.js";
import { runView } from "../../../src/daemon/api/runs.js";
import { automation, createOrders, listing, openExportEnv, readBack, type ExportEnv } from "./export-env.js";

/**
 * An event run (issue #30): an order export given the events' orders reads
 * only those, within its own search, in queries of at most 100 ids; it is a
 * diff run whose record names the events, and a catch-up diff run after it
 * sends only what no event brought.
 */

function order(n: string, extra: Partial<Order> = {}): Order {
  return { ordernumber: n, channel: "shop", dateutc: "2026-03-01 10:00:00", total: "10.00", paymentstatus: "COMPLETE", items: [{ sku: "P1", title: "Widget", price: "10.00", quantity: "1" }], ...extra };
}

describe("eventSearches", () => {
  it("ANDs the config's search with one OR group of ids, 100 at most per query", () => {
    const ids = Array.from({ length: 250 }, (_, i) => String(i + 1));
    const queries = eventSearches("archived:=0", [...ids, "7"]);
    expect(queries).toHaveLength(3);
    expect(queries[0]).toMatch(/^archived:=0 \(oid:=1 oid:=2 .* oid:=100\)$/);
    expect(queries[2]?.match(/oid:=/g)).toHaveLength(250 - 2 * EVENT_ORDERS_PER_QUERY);
    for (const q of queries) expect(() => parseSearch(q)).not.toThrow();
  });

  it("quotes an id that is not a number, so it cannot add a term", () => {
    const [q] = eventSearches(undefined, ['1 name:"x"']);
    expect(q).toBe('(oid:="1 name:\\"x\\"")');
    expect(() => parseSearch(q ?? "")).not.toThrow();
  });

  it("makes no query without an order: never a full scan", () => {
    expect(eventSearches("archived:=0", [])).toEqual([]);
    expect(eventSearches(undefined, [" "])).toEqual([]);
  });
});

describe("an order export run on events", () => {
  let env: ExportEnv;
  let oids: string[];
  let a: Automation;
  const outbox = (): string => path.join(env.storageRoot, "events-out");

  beforeAll(async () => {
    env = await openExportEnv();
    // 1..150 paid; the last one unpaid, outside the config's search.
    const orders = Array.from({ length: 150 }, (_, i) => order(String(5000 + i)));
    orders.push(order("9999", { paymentstatus: "PENDING" }));
    oids = (await createOrders(env, orders)).map(String);
    a = automation({
      type: "orders",
      events: ["order.created"],
      connection: { type: "sdsftp", path: "events-out" },
      file_configs: [{ name: "orders-{{RUN_ID}}.csv", field_map: { ordernumber: "OrderNumber" }, search: "paymentstatus:=COMPLETE" }],
    });
  }, 60_000);

  afterAll(async () => {
    await env.close();
  });

  const eventRun = (events: RunEvents, diff = false): Promise<RunRecord> =>
    runAutomation(env.worker.env, { key: "events-test", automation: a, mode: "prod", trigger: "event", diff, force: false, notify: false, email: null, events });

  async function sent(r: RunRecord): Promise<string[]> {
    const file = r.files[0];
    if (!file) return [];
    return (await readBack(path.join(outbox(), file.name))).map((row) => row.OrderNumber ?? "");
  }

  it("sends only the events' orders within the search, and names the events", async () => {
    const named = [oids[0], oids[3], oids[150]].map(String);
    const r = await eventRun({ ids: ["evt_a", "evt_b", "evt_c"], orders: named });
    expect(r).toMatchObject({ outcome: "success", trigger: "event", diff: true, events: ["evt_a", "evt_b", "evt_c"] });
    expect(await sent(r)).toEqual(["5000", "5003"]);
    expect((await env.worker.env.store.getRun(r.id))?.events).toEqual(["evt_a", "evt_b", "evt_c"]);
    expect((await env.worker.env.store.listRuns({ event: "evt_b" })).map((x) => x.id)).toEqual([r.id]);
    // What `conveyor runs` (its table and --json) and GET /v3/automations/runs/{id} show of it.
    expect(triggerText(r)).toBe("event (3)");
    expect(runJson(r)).toMatchObject({ trigger: "event", events: ["evt_a", "evt_b", "evt_c"] });
    expect(runView(r)).toMatchObject({ trigger: "event", events: ["evt_a", "evt_b", "evt_c"] });
  });

  it("reads more than 100 orders in several short queries, each order once", async () => {
    const many = oids.slice(0, 140);
    const r = await eventRun({ ids: ["evt_many"], orders: [...many, ...many.slice(0, 5)] });
    expect(r.outcome).toBe("success");
    // The two of the first run are not sent again.
    expect((await sent(r)).length).toBe(138);
    expect(r.counts).toMatchObject({ rows: 140, unchanged: 2, create: 138 });
    // Two queries (100 + 40 ids), each paged until a short or empty page.
    expect(r.requests.read).toBeLessThanOrEqual(6);
  });

  it("sends nothing for an event of an order already delivered", async () => {
    const r = await eventRun({ ids: ["evt_again"], orders: [oids[0] ?? ""] });
    expect(r.outcome).toBe("nothing");
    expect(r.files).toEqual([]);
  });

  it("reads nothing at all for events without orders", async () => {
    const r = await eventRun({ ids: ["evt_none"], orders: [] });
    expect(r).toMatchObject({ outcome: "nothing", counts: expect.objectContaining({ rows: 0 }) });
    expect(r.requests.read).toBe(0);
  });

  it("a catch-up diff run afterwards sends only the orders no event brought", async () => {
    const r = await runAutomation(env.worker.env, { key: "events-test", automation: a, mode: "prod", trigger: "schedule", diff: true, force: false, notify: false, email: null });
    expect((await sent(r)).sort()).toEqual(Array.from({ length: 10 }, (_, i) => String(5140 + i)));
    expect(await listing(outbox())).toHaveLength(3);
  });

  it("refuses events for an automation that is not an order export", async () => {
    const products = automation({ connection: { type: "sdsftp", path: "p" }, file_configs: [{ field_map: { sku: "sku" } }] });
    const r = await runAutomation(env.worker.env, { key: "p", automation: products, mode: "prod", trigger: "event", diff: false, force: false, notify: false, email: null, events: { ids: ["evt_x"], orders: ["1"] } });
    expect(r.outcome).toBe("failed");
    expect(r.error?.message).toMatch(/an event run needs an order export/);
  });
});
