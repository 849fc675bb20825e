import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { HttpError } from "../../src/http/envelopes.js";
import { registerErrorReplies, toHttpError } from "../../src/http/errors.js";
import { newFastify } from "../../src/http/fastify.js";
import { silentLogger } from "../../src/log.js";

async function app(v1: boolean, thrown: () => unknown): Promise<ReturnType<typeof newFastify>> {
  const server = newFastify({ logger: false });
  registerErrorReplies(server, { v1, mask: (t) => t.replace("s3cret", "***"), internal: "internal error", logger: silentLogger, logMessage: "failed", logUrl: (r) => r.url });
  const handler = async (): Promise<never> => {
    throw thrown();
  };
  server.get("/v3/thing", handler);
  server.get("/v1/thing", handler);
  await server.ready();
  return server;
}

describe("domain error codes to HTTP statuses", () => {
  it("maps the codes of the table and leaves every other error to the server", () => {
    expect(toHttpError(new ConveyorError("definition_invalid", "a; b", { details: { problems: ["a", "b"] } }))).toMatchObject({ statusCode: 400, message: "a; b", failed: ["a", "b"] });
    expect(toHttpError(new ConveyorError("definition_not_found", "no custom automation with id 9"))?.statusCode).toBe(404);
    expect(toHttpError(new ConveyorError("not_found", "no parameter"))?.statusCode).toBe(404);
    expect(toHttpError(new ConveyorError("conflict", "slug taken"))?.statusCode).toBe(409);
    expect(toHttpError(new ConveyorError("connect", "refused"))).toBeUndefined();
    expect(toHttpError(new Error("boom"))).toBeUndefined();
    const own = new HttpError(418, "teapot");
    expect(toHttpError(own)).toBe(own);
  });

  it("answers a domain error with its status, the validation envelope when it lists problems, and masked messages", async () => {
    const invalid = await app(false, () => new ConveyorError("definition_invalid", "x", { details: { problems: ["name: required s3cret"] } }));
    const res = await invalid.inject({ method: "GET", url: "/v3/thing" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ results: { failed: { "0": { message: "name: required ***", code: 1 } } } });
    await invalid.close();

    const conflict = await app(false, () => new ConveyorError("conflict", "slug s3cret taken"));
    const answered = await conflict.inject({ method: "GET", url: "/v3/thing" });
    expect(answered.statusCode).toBe(409);
    expect(answered.json()).toEqual({ result: "error", message: "slug *** taken" });
    await conflict.close();
  });

  it("keeps a code outside the table a 500 that tells the client nothing more", async () => {
    const server = await app(true, () => new ConveyorError("connect", "refused by 10.0.0.1"));
    const v3 = await server.inject({ method: "GET", url: "/v3/thing" });
    expect(v3.statusCode).toBe(500);
    expect(v3.json()).toEqual({ result: "error", message: "internal error" });
    const v1 = await server.inject({ method: "GET", url: "/v1/thing" });
    expect(v1.statusCode).toBe(500);
    expect(v1.json()).toMatchObject({ result: "failure", message: "internal error" });
    await server.close();
  });

  it("answers v1 paths in the v1 envelope when the server serves v1", async () => {
    const server = await app(true, () => new ConveyorError("definition_invalid", "bad", { details: { problems: ["bad"] } }));
    const res = await server.inject({ method: "GET", url: "/v1/thing" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ result: "failure", message: "bad" });
    await server.close();
  });
});
