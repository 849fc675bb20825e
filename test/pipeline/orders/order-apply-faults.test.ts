import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSettings } from "../../../src/config.js";
import { silentLogger } from "../../../src/log.js";
import { runAutomation } from "../../../src/pipeline/run.js";
import type { RunRecord } from "../../../src/state/index.js";
import { openWorker, type Worker } from "../../../src/worker.js";
import { allOrders, openOrderEnv, putFeed, storageImport, type OrderEnv } from "./order-env.js";

/**
 * A service that fails a create request outright (HTTP 503 on the first
 * `POST /v3/orders`, through a loopback proxy in front of the embedded
 * service): a create is not repeated blindly, so that body's orders fail,
 * writing stops, the later body is not sent, and the next run sends both.
 */
describe("order import: the service fails a bulk request", () => {
  let env: OrderEnv;
  let proxy: Server;
  let worker: Worker;
  let failNextCreate = true;

  beforeAll(async () => {
    env = await openOrderEnv();
    const target = env.worker.embedded?.url ?? "";
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (failNextCreate && req.method === "POST" && req.url === "/v3/orders") {
          failNextCreate = false;
          res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ result: "error", message: "down for maintenance" }));
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        fetch(`${target}${req.url ?? "/"}`, { method: req.method, headers, body })
          .then(async (answer) => res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" }).end(Buffer.from(await answer.arrayBuffer())))
          .catch(() => res.writeHead(502).end());
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const settings = loadSettings({
      cwd: env.dir,
      env: {
        CONVEYOR_DATA_DIR: path.join(env.dir, "proxied"),
        CONVEYOR_SERVICE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        CONVEYOR_API_USER: env.worker.env.account,
        CONVEYOR_API_TOKEN: env.worker.embedded?.apiToken ?? "",
        CONVEYOR_STORAGE: env.settings.storage,
        CONVEYOR_READ_LIMIT: "100000",
        CONVEYOR_WRITE_LIMIT: "100000",
        CONVEYOR_LOG_LEVEL: "silent",
      },
    });
    worker = await openWorker(settings, silentLogger);
  });

  afterAll(async () => {
    await worker?.close();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await env.close();
  });

  const automation = storageImport("faulty", {
    name: "/faulty.*\\.csv/",
    field_map: { ordernumber: "Order", channel: "Channel", total: "Total", email: "Email", "items.sku": "SKU", "items.quantity": "Qty" },
    identifier: "ordernumber",
    create: true,
  });
  const runProxied = (): Promise<RunRecord> =>
    runAutomation(worker.env, { key: automation.slug, automation, mode: "prod", trigger: "manual", diff: false, force: false, notify: false, email: null, stabilityPollMs: 10 });

  it("the failed body's orders and the unsent later body's orders are failed; the run ends failed with the service's reason", async () => {
    // F-2 has no email: another column set, so another body.
    await putFeed(env, "faulty.csv", "Order,Channel,Total,Email,SKU,Qty\nF-1,web,3.00,f1@x.test,A,1\nF-2,web,4.00,,B,1\n");
    const record = await runProxied();
    expect(record.outcome).toBe("failed");
    expect(record.counts).toMatchObject({ create: 2, failed: 2 });
    expect(record.error?.message).toContain("down for maintenance");
    expect(record.requests.write).toBe(1);
    expect(await allOrders(env)).toEqual([]);
    const logs = (await worker.env.store.searchLogs({ account: worker.env.account, records: 100 })).logs.filter((l) => l.job_id === record.id);
    expect(logs.map((l) => [l.identifier, l.result, JSON.parse(l.message).error as string]).sort()).toEqual([
      ["F-1", "error", expect.stringContaining("HTTP 503")],
      ["F-2", "error", expect.stringMatching(/^not sent: .*down for maintenance/)],
    ]);
  });

  it("the next run sends both", async () => {
    const record = await runProxied();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ create: 2, failed: 0 });
    expect((await allOrders(env)).map((o) => o.ordernumber).sort()).toEqual(["F-1", "F-2"]);
  });
});
