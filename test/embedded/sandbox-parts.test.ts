import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";

type Body = Record<string, unknown>;

describe("embedded service: the sandbox parts of v1 4.4-4.9 and v3 4.1/4.8", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const as = async (user: string, token: string, method: string, urlPath: string, body?: Body): Promise<{ status: number; body: Body }> => {
    const res = await fetch(`${h.svc.url}${urlPath}`, {
      method,
      headers: { "X-Auth-User": user, "X-Auth-Token": token, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Body };
  };

  it("settings change options; a bad setting name is refused by name", async () => {
    const res = await h.form("/v1/settings", { image_media_locations: "gallery*extra", site_name: "Sandbox" });
    expect(res.body).toMatchObject({ result: "success", updated: ["image_media_locations", "site_name"] });
    expect((await h.json("GET", "/v1/options/site_name")).body.value).toBe("Sandbox");
    const bad = await h.form("/v1/settings", { "bad name": "x" });
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toContain('"bad name"');
    expect((await h.json("GET", "/v1/options/nope")).status).toBe(404);
  });

  it("imports/cancel resets a plugin's import settings, from a body or the query", async () => {
    const res = await h.json("POST", "/v1/imports/cancel", { plugin: "ebay" });
    expect(res.body).toMatchObject({ result: "success", plugin: "ebay" });
    expect((await h.json("GET", "/v1/options/ebay_import_limit")).body.value).toBe("0");
    expect((await h.call("POST", "/v1/imports/cancel?plugin=amazon")).status).toBe(200);
    const none = await h.json("POST", "/v1/imports/cancel", {});
    expect(none.status).toBe(400);
    expect(String(none.body.message)).toContain("plugin=");
  });

  it("sub-users: owner adds one, it signs in with its own token, and the role rules hold", async () => {
    const add = await h.json("POST", "/v1/profile/add", { username: "helper1", name: "Helper" });
    expect(add.body).toMatchObject({ result: "success", role: "user", userid: "1", username: "helper1" });
    const token = String(add.body.token);
    const userpk = Number(add.body.userpk);
    expect(userpk).toBeGreaterThanOrEqual(1);
    const me = await as("helper1", token, "GET", "/v1/profile");
    expect(me.body).toMatchObject({ username: "helper1", role: "user", name: "Helper" });
    const refused = await as("helper1", token, "POST", "/v1/profile/add", { username: "helper2" });
    expect(refused.body.message).toBe("User is not allowed to add new users");
    // A user-role caller cannot change its role, and the path value is ignored.
    const selfUp = await as("helper1", token, "POST", "/v1/profile/update/99", { role: "admin", bio: "mine" });
    expect(selfUp.body).toMatchObject({ result: "success", role: "user", bio: "mine", userpk, ignored: ["role"] });
    // The owner may change the sub-user's role.
    const promote = await h.json("POST", `/v1/profile/update/${userpk}`, { role: "admin" });
    expect(promote.body).toMatchObject({ result: "success", role: "admin", userpk });
    const badRole = await h.json("POST", `/v1/profile/update/${userpk}`, { role: "owner" });
    expect(badRole.status).toBe(400);
    expect((await h.json("GET", "/v1/profile/users")).status).toBe(403);
    // v3 sub-user deletion: the owner deletes, the token stops working.
    expect((await h.json("DELETE", "/v3/account/users/0")).status).toBe(400);
    expect((await h.json("DELETE", `/v3/account/users/${userpk}`)).body.result).toBe("success");
    expect((await as("helper1", token, "GET", "/v1/profile")).status).toBe(401);
    expect((await h.json("DELETE", `/v3/account/users/${userpk}`)).status).toBe(404);
  });

  it("assets: the listing of configured paths, presigned links valid 10 minutes, the error envelope of /v1/assets", async () => {
    const media = path.join(h.dataDir, "embedded", "assets", "media");
    mkdirSync(media, { recursive: true });
    writeFileSync(path.join(media, "a.jpg"), "JPEG");
    const list = await h.json("GET", "/v1/assets/list?path=media");
    expect(list.body.result).toBe("success");
    expect((list.body.media as Body[]).map((m) => m.name)).toEqual(["a.jpg"]);
    const unknown = await h.json("GET", "/v1/assets/list?path=secret");
    expect(unknown.body).toMatchObject({ result: "success", media: [] });
    expect((await h.json("GET", "/v1/assets/list?path=gallery")).body.media).toEqual([]);
    const one = await h.json("GET", "/v1/assets/..%2F..%2Fa.jpg?path=media");
    expect(one.body.result).toBe("success");
    expect(Number(one.body.expires) - Number(one.body.time)).toBe(600);
    const file = await fetch(String(one.body.url));
    expect(await file.text()).toBe("JPEG");
    // Flip the signature's first hex digit (a fixed "0" would leave one link in 16 intact).
    const tampered = String(one.body.url).replace(/signature=(.)/, (_m, c: string) => `signature=${c === "0" ? "1" : "0"}`);
    expect((await fetch(tampered)).status).toBe(403);
    const invalid = await h.json("GET", "/v1/assets");
    expect(invalid.body).toMatchObject({ result: "failure", message: "Invalid asset request" });
  });

  it("marketplace, carrier and platform parts answer the not-in-the-sandbox envelope", async () => {
    const tax = await h.json("POST", "/v1/taxonomy/ebay", { category: "1" });
    expect(tax.status).toBe(501);
    expect(tax.body).toMatchObject({ result: "failure", sandbox: true });
    expect(String(tax.body.message)).toMatch(/not in the sandbox.*no marketplace/);
    const fit = await h.json("POST", "/v1/fitment/ebay/epid", {});
    expect(fit.status).toBe(501);
    const ship = await h.json("POST", "/v3/shipping/rates", {});
    expect(ship.body).toMatchObject({ result: "error", sandbox: true });
    expect((await h.json("GET", "/v3/account")).status).toBe(405);
  });

  it("v3 channel statuses, categories and search read the sandbox's own data", async () => {
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "C1", title: "Shoe", category: "Shoes" });
    await h.form("/v1/editor/items/add", { identifier: "guid", guid: "C2", title: "Hat", category: "Hats" });
    await h.json("POST", "/v3/orders", { ordernumber: "V1", channel: "shop", total: "1", items: [{ sku: "C1", title: "Shoe", price: "1", quantity: "1" }] });
    const statuses = await h.json("GET", "/v3/channel/statuses");
    expect(statuses.body.channels).toEqual([{ channel: "shop", instance: 0, status: "inactive" }]);
    const cats = await h.json("GET", "/v3/categories/shop?search=sho");
    expect(cats.body.categories).toEqual([{ id: "Shoes", name: "Shoes" }]);
    const items = await h.json("GET", "/v3/search/items/category:=Hats");
    expect(items.body.count).toBe("1");
    const orders = await h.json("GET", "/v3/search/orders/channel:=shop");
    expect(orders.body.count).toBe("1");
    const badType = await h.json("GET", "/v3/search/shop/x");
    expect(badType.status).toBe(400);
    const badParam = await h.json("GET", "/v3/search/items/x?foo=1");
    expect(JSON.stringify(badParam.body)).toContain("valid parameters: page, sort, limit");
  });
});
