import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestDaemon, stockDefinition, type TestDaemon } from "../daemon/daemon-harness.js";
import { ConsoleClient } from "./console-client.js";

let t: TestDaemon;
let user: string;
let token: string;

beforeAll(async () => {
  t = await startTestDaemon({ definitions: { "stock.json": stockDefinition() } });
  user = t.headers["X-Auth-User"] ?? "";
  token = t.headers["X-Auth-Token"] ?? "";
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe("console sessions", () => {
  it("sends a browser without a session to the sign-in form, with the security headers", async () => {
    const c = new ConsoleClient(t);
    const root = await c.get("/");
    expect(root.status).toBe(303);
    expect(root.headers.get("location")).toBe("/sign-in");
    const page = await c.get("/automations");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/sign-in?next=%2Fautomations");
    const form = await c.get("/sign-in");
    expect(form.status).toBe(200);
    expect(form.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(form.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(form.headers.get("x-content-type-options")).toBe("nosniff");
    expect(form.headers.get("referrer-policy")).toBe("same-origin");
    expect(form.headers.get("cache-control")).toBe("no-store");
    expect(form.text).not.toMatch(/<script>/);
  });

  it("refuses a wrong token and an unknown user alike, and signs in with the right pair", async () => {
    const c = new ConsoleClient(t);
    const wrong = await c.post("/sign-in", { user, token: "not-the-token" });
    const unknown = await c.post("/sign-in", { user: "nobody-here", token: "not-the-token" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.text.replace(user, "X")).toBe(unknown.text.replace("nobody-here", "X"));
    expect(c.cookie).toBe("");
    const ok = await c.post("/sign-in", { user, token });
    expect(ok.status).toBe(303);
    const cookie = ok.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^conveyor_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/);
    expect((await c.get("/automations")).status).toBe(200);
  });

  it("refuses a cross-site POST and one without the CSRF token with 403", async () => {
    const c = new ConsoleClient(t);
    await c.signIn(user, token);
    const csrf = await c.csrf();
    const automations = await t.request("GET", "/v3/automations/custom");
    const first = (automations.body.automations as Array<{ id: string }>)[0];
    expect(first).toBeDefined();
    const path = `/automations/custom/${first?.id}/active`;
    const foreign = await c.post(path, { _csrf: csrf, active: "0" }, { Origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain("evil.example");
    const crossSite = await c.post(path, { _csrf: csrf, active: "0" }, { "Sec-Fetch-Site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const noToken = await c.post(path, { active: "0" });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain("CSRF");
    const still = await t.request("GET", `/v3/automations/custom/${first?.id}`);
    expect((still.body.automation as { active: boolean }).active).toBe(true);
  });

  it("ends the session on sign-out and when the account's token changes", async () => {
    const c = new ConsoleClient(t);
    await c.signIn(user, token);
    const csrf = await c.csrf();
    const kept = c.cookie;
    expect((await c.post("/sign-out", { _csrf: csrf })).status).toBe(303);
    c.cookie = kept;
    expect((await c.get("/automations")).status).toBe(303);

    const second = await t.daemon.accounts.add("rotating", undefined, "test");
    const d = new ConsoleClient(t);
    expect(await d.signIn("rotating", second)).toBe(303);
    expect((await d.get("/automations")).status).toBe(200);
    await t.daemon.accounts.add("rotating", "a-brand-new-token", "test");
    expect((await d.get("/automations")).status).toBe(303);
  });

  it("keeps the /v3 API behind its headers and refuses form bodies there", async () => {
    const res = await fetch(`${t.daemon.url}/v3/automations/custom`);
    expect(res.status).toBe(401);
    const form = await fetch(`${t.daemon.url}/v3/logs`, { method: "POST", headers: { ...t.headers, "Content-Type": "application/x-www-form-urlencoded" }, body: "identifier=A1" });
    expect(form.status).toBe(415);
  });
});
