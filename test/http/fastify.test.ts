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
