import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";

describe("embedded service: authentication (v3 part 5, v1 part 5)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it("without credentials: 401 with the v1 failure envelope", async () => {
    const res = await fetch(`${h.svc.url}/v1/editor/items`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.result).toBe("failure");
    expect(typeof body.message).toBe("string");
    expect(typeof body.time).toBe("number");
  });

  it("with a wrong token: 401, and on v3 the error envelope", async () => {
    const res = await fetch(`${h.svc.url}/v3/orders`, { headers: { "X-Auth-User": h.svc.apiUser, "X-Auth-Token": "wrong-token" } });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ result: "error" });
  });

  it("X-Auth-Integration is not a credential", async () => {
    const res = await fetch(`${h.svc.url}/v3/orders`, { headers: { "X-Auth-Integration": h.svc.apiToken, "X-Auth-User": h.svc.apiUser } });
    expect(res.status).toBe(401);
    const ok = await h.call("GET", "/v3/orders", undefined, { "X-Auth-Integration": "partner" });
    expect(ok.status).toBe(200);
  });

  it("the generated token is kept in the data folder with mode 0600 and never in a response body of a failure", async () => {
    const file = path.join(h.dataDir, "embedded", "api-token");
    expect(readFileSync(file, "utf8").trim()).toBe(h.svc.apiToken);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const res = await fetch(`${h.svc.url}/v1/editor/items`, { headers: { "X-Auth-User": h.svc.apiUser, "X-Auth-Token": `${h.svc.apiToken}x` } });
    expect(await res.text()).not.toContain(h.svc.apiToken);
  });

  it("POST /v1/auth exchanges user and pass (the token) for the token, without credentials", async () => {
    const res = await fetch(`${h.svc.url}/v1/auth`, { method: "POST", body: new URLSearchParams({ user: h.svc.apiUser, pass: h.svc.apiToken }) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ token: h.svc.apiToken });
    const json = await fetch(`${h.svc.url}/v1/auth`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: h.svc.apiUser, pass: "nope" }) });
    expect(json.status).toBe(401);
    expect(await json.json()).toMatchObject({ result: "failure" });
  });

  it("GET /v1/auth returns the profile with role, userid, userpk; apiuser may name the user", async () => {
    const { status, body } = await h.json("GET", "/v1/auth");
    expect(status).toBe(200);
    expect(body).toMatchObject({ role: "owner", userid: "1", userpk: 0 });
    const res = await fetch(`${h.svc.url}/v1/auth?apiuser=${h.svc.apiUser}`, { headers: { "X-Auth-Token": h.svc.apiToken } });
    expect(res.status).toBe(200);
  });
});

describe("embedded service: throttling (v3 part 8)", () => {
  let h: Harness;
  // A still clock in the middle of a minute, so no window rolls over during the test.
  const fixed = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  beforeAll(async () => {
    h = await startHarness({ readLimit: 3, writeLimit: 2, optionsLimit: 5, now: () => fixed });
  });
  afterAll(() => h.close());

  it("every response carries the four rate-limit headers, also 401 and 404", async () => {
    const responses = [
      await fetch(`${h.svc.url}/v1/editor/items`, { method: "POST" }),
      await h.call("GET", "/v3/nothing-here"),
      await h.call("OPTIONS", "/v3/orders"),
    ];
    for (const res of responses) {
      expect(res.headers.get("x-rate-limit-limit")).toMatch(/^\d+$/);
      expect(res.headers.get("x-rate-limit-remaining")).toMatch(/^\d+$/);
      expect(Number(res.headers.get("x-rate-limit-reset"))).toBe(fixed / 1000 + 30);
      expect(["read", "write", "options"]).toContain(res.headers.get("x-rate-limit-type"));
    }
    expect(responses[0]?.headers.get("x-rate-limit-type")).toBe("write");
    expect(responses[2]?.headers.get("x-rate-limit-type")).toBe("options");
  });

  it("over the limit: 429 with Remaining 0 and Reset in the next minute", async () => {
    const seen: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 5; i += 1) {
      last = await h.call("GET", "/v3/orders");
      seen.push(last.status);
    }
    expect(seen).toContain(429);
    expect(last?.status).toBe(429);
    expect(last?.headers.get("x-rate-limit-remaining")).toBe("0");
    expect(last?.headers.get("x-rate-limit-limit")).toBe("3");
    expect(last?.headers.get("retry-after")).toBe("30");
    expect(await last?.json()).toMatchObject({ result: "error" });
  });

  it("classes are counted apart: writes have their own budget", async () => {
    const res = await h.call("POST", "/v3/logs", {});
    expect(res.status).toBe(200);
    expect(res.headers.get("x-rate-limit-type")).toBe("write");
    expect(res.headers.get("x-rate-limit-limit")).toBe("2");
  });
});
