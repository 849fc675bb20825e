import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { ServiceClient } from "../../src/service/client.js";
import { newCounter } from "../../src/service/http.js";
import { TokenBucketLimiter } from "../../src/service/limiter.js";
import { json, startFaultServer, type FaultHandler, type FaultServer } from "./fault-server.js";
import { caught as failure } from "../helpers/caught.js";

const TOKEN = "tok-5ecret-value-0123456789";
let server: FaultServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function clientFor(handler: FaultHandler, logLines?: string[]): Promise<ServiceClient> {
  server = await startFaultServer(handler);
  const logger = logLines
    ? createLogger({
        level: "debug",
        destination: new Writable({
          write(chunk: Buffer, _enc, done) {
            logLines.push(chunk.toString());
            done();
          },
        }),
      })
    : undefined;
  return new ServiceClient({
    baseUrl: server.url,
    apiUser: "demo",
    apiToken: TOKEN,
    integration: "conveyor-test",
    limiter: new TokenBucketLimiter(),
    logger,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  });
}


describe("request layer against a misbehaving server", () => {
  it("sends the auth headers and reads v1 records", async () => {
    const client = await clientFor((_req, res) => json(res, 200, { guid: "A-1", price: 9.5, title: "Lamp" }));
    expect(await client.getItem({ guid: "A-1" })).toEqual({ guid: "A-1", price: "9.5", title: "Lamp" });
    const [req] = server?.received ?? [];
    expect(req?.path).toBe("/v1/editor/items/edit?guid=A-1");
    expect(req?.headers["x-auth-user"]).toBe("demo");
    expect(req?.headers["x-auth-token"]).toBe(TOKEN);
    expect(req?.headers["x-auth-integration"]).toBe("conveyor-test");
  });

  it("retries a read answered 503 and counts every request sent", async () => {
    let calls = 0;
    const client = await clientFor((_req, res) => {
      calls += 1;
      if (calls < 3) json(res, 503, { result: "error", message: "maintenance" });
      else json(res, 200, { "1": { guid: "A" }, "2": { guid: "B" }, all: 2, time: 1 });
    });
    const counter = newCounter();
    const page = await client.withCounter(counter).listItems({ page: 1 });
    expect(page.items.map((i) => i.guid)).toEqual(["A", "B"]);
    expect(counter).toEqual({ read: 3, write: 0 });
    expect(client.counter).toEqual({ read: 0, write: 0 });
  });

  it("retries a read whose connection is dropped mid-response", async () => {
    let calls = 0;
    const client = await clientFor((_req, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(200, { "content-type": "application/json", "content-length": "500" });
        res.write('{"count":"1","orders":[{"oid"');
        setTimeout(() => res.socket?.destroy(), 10);
        return;
      }
      if (calls === 2) {
        res.socket?.destroy();
        return;
      }
      json(res, 200, { count: "1", timestamp: "2025-01-01T00:00:00Z", orders: [{ oid: "7" }] });
    });
    const list = await client.listOrders({ q: "archived:=0" });
    expect(list.orders).toEqual([{ oid: "7" }]);
    expect(calls).toBe(3);
  });

  it("does not repeat a write that is not safe to repeat, but repeats an idempotent one", async () => {
    const client = await clientFor((_req, res) => json(res, 503, { result: "error", message: "busy" }));
    const add = await failure(client.itemAction("add", "G-1", { title: "x" }));
    expect(add.code).toBe("service_unavailable");
    expect(server?.received).toHaveLength(1);
    const edit = await failure(client.itemAction("edit", "G-1", { title: "x" }));
    expect(edit.code).toBe("service_unavailable");
    expect(server?.received).toHaveLength(1 + 5);
    expect(server?.received[1]?.body.toString()).toBe("title=x&identifier=guid&guid=G-1");
  });

  it("reads v1 failures from the body, not the status, and the missing-record envelope as null", async () => {
    const client = await clientFor((req, res) => {
      if (req.path.startsWith("/v1/editor/items/edit/")) json(res, 200, { time: 1700000000, type: "items" });
      else json(res, 200, { result: "failure", message: "Item G-9 already exists", time: 1700000000 });
    });
    expect(await client.getItemById(42)).toBeNull();
    const err = await failure(client.itemAction("add", "G-9", { title: "x" }));
    expect(err.code).toBe("service_rejected");
    expect(err.message).toBe("POST /v1/editor/items/add was refused by the service: Item G-9 already exists");
  });

  it("errors carry the service's message and the request, never the token", async () => {
    const lines: string[] = [];
    const client = await clientFor((req, res) => {
      // A careless server echoing the credentials back must not leak them either.
      json(res, 400, { results: { failed: { "0": { message: `unknown parameter colour (token ${String(req.headers["x-auth-token"])})`, code: 1 } } } });
    }, lines);
    const err = await failure(client.listOrders({ q: "x", page: 2 }));
    expect(err.code).toBe("service_http");
    expect(err.details).toMatchObject({ method: "GET", status: 400 });
    expect(err.message).toContain("GET /v3/orders?page=2&q=x failed with HTTP 400: unknown parameter colour");
    const everything = [err.message, JSON.stringify(err.toJSON()), String(err.stack), ...lines].join("\n");
    expect(everything).not.toContain(TOKEN);
    expect(lines.length).toBeGreaterThan(0);
  });

  it("turns a refused connection into a retryable error naming the request", async () => {
    server = await startFaultServer((_req, res) => json(res, 200, {}));
    const url = server.url;
    await server.close();
    server = undefined;
    const client = new ServiceClient({ baseUrl: url, apiUser: "demo", apiToken: TOKEN, limiter: new TokenBucketLimiter(), retry: { attempts: 2, baseDelayMs: 5 } });
    const err = await failure(client.getOrder(5));
    expect(err.code).toBe("service_unavailable");
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("GET /v3/orders/5 failed");
    expect(err.details).toMatchObject({ sent: false });
    expect(client.counter.read).toBe(2);
  });

  it("cancels a request waiting for the budget when its signal aborts", async () => {
    const limiter = new TokenBucketLimiter({ limits: { read: 1 } });
    server = await startFaultServer((_req, res) => json(res, 200, { count: "0", orders: [] }));
    const client = new ServiceClient({ baseUrl: server.url, apiUser: "demo", apiToken: TOKEN, limiter });
    await client.listOrders();
    const controller = new AbortController();
    const pending = client.listOrders({ signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const err = await failure(pending);
    expect(err.code).toBe("canceled");
    expect(server.received).toHaveLength(1);
  });
});
