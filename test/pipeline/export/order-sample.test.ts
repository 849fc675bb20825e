import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Order } from "../../../src/service/index.js";
import { TestSftpServer } from "../../helpers/sftp-server.js";
import { loadSample } from "../../samples/sample-env.js";
import { createOrders, debugSource, listing, openExportEnv, readBack, run, type ExportEnv } from "./export-env.js";

/**
 * samples/order-export-sftp.json against a real SFTP server: paid, unshipped,
 * not archived orders, one row per line item. Run with diff, an order it
 * delivered is never sent again, even after it changed.
 */
const PASSWORD = "keystone-Pw-31";

function order(n: string, extra: Partial<Order> = {}): Order {
  return {
    ordernumber: n,
    channel: "shop",
    dateutc: "2026-03-01 10:00:00",
    total: "30.00",
    paymentstatus: "COMPLETE",
    shipping: { firstname: "Ada", lastname: "Lovelace", streetl: "1 Main St", city: "London", postalcode: "N1 9GU", country: "GB", phone: "+44 20 1234" },
    items: [
      { sku: "P1", title: "Widget, large", price: "10.00", quantity: "2" },
      { sku: "P2", title: "Gadget", price: "5.00", quantity: "2" },
    ],
    ...extra,
  };
}

describe("samples/order-export-sftp.json", () => {
  let env: ExportEnv;
  let server: TestSftpServer;
  let root: string;
  const outbox = (): string => path.join(root, "inbound", "orders");

  beforeAll(async () => {
    env = await openExportEnv();
    root = await mkdtemp(path.join(tmpdir(), "conveyor-sftp-orders-"));
    await mkdir(outbox(), { recursive: true });
    server = await new TestSftpServer({ root, username: "client-acme", password: PASSWORD }).start();
    await createOrders(env, [
      order("1001"),
      order("1002", { shippingservice: "Express", items: [{ sku: "P3", title: "Bolt", price: "1.00", quantity: "30" }] }),
      // Out of the search: unpaid, shipped, archived.
      order("1003", { paymentstatus: "PENDING" }),
      order("1004", { shippingstatus: "COMPLETE" }),
      order("1005", { archived: "1" }),
    ]);
  });

  afterAll(async () => {
    await server.close();
    await env.close();
    await rm(root, { recursive: true, force: true });
  });

  const sample = () => loadSample("order-export-sftp.json", { "sftp host": "127.0.0.1", "sftp port": String(server.port), "sftp user": "client-acme", "sftp password": PASSWORD });
  const line = (n: string, sku: string, title: string, qty: string, price: string, service = "Ground") => ({
    OrderNumber: n,
    Channel: "shop",
    OrderDateUTC: "2026-03-01 10:00:00",
    ShipService: service,
    ShipFirstName: "Ada",
    ShipLastName: "Lovelace",
    ShipCompany: "",
    ShipAddress1: "1 Main St",
    ShipAddress2: "",
    ShipCity: "London",
    ShipState: "",
    ShipZip: "N1 9GU",
    ShipCountry: "GB",
    ShipPhone: "+44 20 1234",
    SKU: sku,
    Description: title,
    Qty: qty,
    UnitPrice: price,
  });
  const delivered = async (): Promise<Record<string, string>[]> => {
    const rows: Record<string, string>[] = [];
    for (const name of await listing(outbox())) rows.push(...(await readBack(path.join(outbox(), name))));
    return rows;
  };

  it("debug run: one row per line of the paid, unshipped, active orders; nothing uploaded", async () => {
    const r = await run(env, await sample(), { mode: "debug", diff: true });
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    expect(r.counts).toMatchObject({ rows: 3, create: 3, unchanged: 0, row_errors: 0 });
    const file = r.files[0]?.name ?? "";
    expect(file).toMatch(new RegExp(`^orders_\\d{8}-\\d{6}_${r.id}\\.csv$`));
    expect(await readBack(debugSource(env, r, file))).toEqual([
      line("1001", "P1", "Widget, large", "2", "10.00"),
      line("1001", "P2", "Gadget", "2", "5.00"),
      line("1002", "P3", "Bolt", "30", "1.00", "Express"),
    ]);
    expect(await listing(outbox())).toEqual([]);
  });

  it("diff runs never re-send a delivered order, even after it changed; new orders go out", async () => {
    const first = await run(env, await sample(), { diff: true });
    expect(first.error).toBeNull();
    expect(first.counts).toMatchObject({ rows: 3, create: 3 });
    expect(await delivered()).toHaveLength(3);

    const again = await run(env, await sample(), { diff: true });
    expect(again.outcome).toBe("nothing");
    expect(again.counts).toMatchObject({ rows: 3, create: 0, unchanged: 3 });
    expect(await listing(outbox())).toHaveLength(1);

    // A delivered order edited afterwards, and a new one.
    const [changed] = (await env.worker.env.client.listOrders({ q: "ordernumber:=1001" })).orders;
    await env.worker.env.client.updateOrder(String(changed?.oid), { shippingservice: "Overnight" });
    await createOrders(env, [order("1006", { items: [{ sku: "P9", title: "Nut", price: "0.10", quantity: "100" }] })]);
    const third = await run(env, await sample(), { diff: true });
    expect(third.error).toBeNull();
    expect(third.counts).toMatchObject({ rows: 4, create: 1, unchanged: 3 });
    const names = await listing(outbox());
    expect(names).toHaveLength(2);
    const newest = names.find((n) => n.includes(third.id)) ?? "";
    expect(await readBack(path.join(outbox(), newest))).toEqual([line("1006", "P9", "Nut", "100", "0.10")]);
    // The edit is real: a full debug run shows it.
    const full = await run(env, await sample(), { mode: "debug" });
    const shown = await readBack(debugSource(env, full, full.files[0]?.name ?? ""));
    expect(shown.filter((r) => r.OrderNumber === "1001").map((r) => r.ShipService)).toEqual(["Overnight", "Overnight"]);
    // Every order line was delivered exactly once across the runs.
    const all = await delivered();
    expect(all.map((r) => `${r.OrderNumber}/${r.SKU}`).sort()).toEqual(["1001/P1", "1001/P2", "1002/P3", "1006/P9"]);
  });
});
