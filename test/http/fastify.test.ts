import { connect, type AddressInfo, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { newFastify } from "../../src/http/fastify.js";

describe("newFastify", () => {
  it("serves routes without JSON schemas", async () => {
    const app = newFastify({ logger: false });
    app.get("/ping", async () => ({ pong: true }));
    const res = await app.inject({ method: "GET", url: "/ping" });
    expect(res.json()).toEqual({ pong: true });
    await app.close();
  });

  it("refuses a route schema at start-up instead of leaving it unvalidated", async () => {
    const app = newFastify({ logger: false });
    app.get("/items", { schema: { querystring: { type: "object", properties: { limit: { type: "integer" } } } } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(/route schemas are not used here/);
  });
});

/** Raw keep-alive clients that never close a connection themselves, as a pooled client holding an idle socket does not. */
function rawClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

function firstResponse(socket: Socket): Promise<string> {
  return new Promise((resolve) => socket.once("data", (chunk: Buffer) => resolve(chunk.toString("latin1"))));
}

describe("newFastify close", () => {
  it("closes a keep-alive connection whose response ends after close began, and one that has not sent a request yet", async () => {
    const app = newFastify({ logger: false });
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    app.get("/slow", async () => {
      await held;
      return { done: true };
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    const busy = await rawClient(port);
    const answered = firstResponse(busy);
    busy.write("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
    await new Promise((r) => setTimeout(r, 50));
    // Connected but no request sent yet: Node counts it active (for its headers timeout), so close() alone leaves it open.
    const late = await rawClient(port);
    await new Promise((r) => setTimeout(r, 50));
    const closed = app.close();
    release();
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    // Neither client closes; without the server closing them, close() would wait for its 72 s keep-alive timeout.
    const outcome = await Promise.race([closed.then(() => "closed"), new Promise((r) => setTimeout(() => r("still open"), 3_000))]);
    busy.destroy();
    late.destroy();
    expect(outcome).toBe("closed");
  });
});
