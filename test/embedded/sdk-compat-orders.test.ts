import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ordinals, startHarness, type Harness } from "./helpers.js";
import { SdkReplay } from "./sdk-compat-client.js";

/** The official client's order, option and profile calls, replayed as it sends them. */
describe("the official client's order, option and profile calls", () => {
  let h: Harness;
  let sdk: SdkReplay;
  beforeAll(async () => {
    h = await startHarness();
    sdk = new SdkReplay(h.svc.url, h.svc.apiUser, h.svc.apiToken);
  });
  afterAll(() => h.close());

  const newOrder = (n: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    ordernumber: n,
    channel: "shop",
    total: "30.00",
    email: `${n}@example.com`,
    billing: { firstname: "Ada", lastname: "<Lovelace>", city: "Berlin" },
    items: [{ sku: "P1", title: "Widget", price: "10", quantity: "3" }],
    ...extra,
  });

  it("puts orders through the json= wrapper; the v3 API serves the same orders", async () => {
    const a = await sdk.postRecord("v1/orders/add", newOrder("A1"));
    expect(a.body).toMatchObject({ result: "success", order: "shopA1" });
    await sdk.postRecord("v1/orders/add", newOrder("A2", { paymentdate: "2026-01-02 10:00:00" }));
    await sdk.postRecord("v1/orders/add", newOrder("A3", { paymentdate: "2026-01-02 10:00:00", shippingstatus: "COMPLETE" }));
    const v3 = await h.json("GET", "/v3/orders");
    expect(v3.body.count).toBe("3");
    const dup = await sdk.postRecord("v1/orders/add", newOrder("A1"));
    expect(dup.status).toBe(200);
    expect(dup.body.result).toBe("failure");
  });

  it("lists all, shipped, awaiting and packing with empty page and sort", async () => {
    const count = async (state: string): Promise<unknown> => (await sdk.get(`v1/orders/${state}?page=&sort=`)).body.all;
    expect(await count("all")).toBe(3);
    expect(await count("shipped")).toBe(1);
    expect(await count("awaiting")).toBe(2);
    expect(await count("packing")).toBe(1);
    const all = await sdk.get("v1/orders/all?page=1&sort=oid_");
    expect(ordinals(all.body).map(([, o]) => o.order)).toEqual(["shopA3", "shopA2", "shopA1"]);
  });

  it("reads one order by oid and by channel order number", async () => {
    const byNumber = await sdk.get("v1/orders/edit/shopA1");
    expect(byNumber.body).toMatchObject({ order: "shopA1", channel: "shop" });
    const byOid = await sdk.get(`v1/orders/edit/${String(byNumber.body.oid)}`);
    expect(byOid.body.order).toBe("shopA1");
    const missing = await sdk.get("v1/orders/edit/nope");
    expect(missing.status).toBe(200);
    expect(missing.body.result).toBe("failure");
  });

  it("updates an order posted to /v1/orders/edit/{order}, fulfilling it with tracking", async () => {
    const res = await sdk.postRecord("v1/orders/edit/shopA2", { order: "shopA2", shipcarrier: "UPS", shiptracking: "1Z999" });
    expect(res.body.result).toBe("success");
    const read = await sdk.get("v1/orders/edit/shopA2");
    expect(read.body.shippingstatus).toBe("COMPLETE");
    expect((read.body.shipments as Record<string, string>[])[0]).toMatchObject({ shipcarrier: "UPS", shiptracking: "1Z999" });
    expect((await sdk.get("v1/orders/shipped")).body.all).toBe(2);
  });

  it("an invoice is an HTML envelope; an unknown order is 200 with result failure", async () => {
    const inv = await sdk.get("v1/orders/invoice/shopA1");
    expect(inv.body.result).toBe("success");
    expect(String(inv.body.invoice)).toContain("<h1>Invoice shopA1</h1>");
    expect(String(inv.body.invoice)).toContain("&lt;Lovelace&gt;");
    expect((inv.body.order as Record<string, unknown>).order).toBe("shopA1");
    const unknown = await sdk.get("v1/orders/invoice/99999");
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ result: "failure" });
    expect(typeof unknown.body.time).toBe("number");
  });

  it("searches orders by path as the client builds it", async () => {
    const res = await sdk.search("orders", { channel: "shop", ordernumber: "A1" });
    expect(res.body.all).toBe(1);
  });

  it("reads every option and one option", async () => {
    const all = await sdk.get("v1/options/all");
    expect(all.body.result).toBe("success");
    expect(all.body.options).toHaveProperty("image_media_locations");
    const one = await sdk.get("v1/options/image_media_locations");
    expect(one.body).toMatchObject({ result: "success", option: "image_media_locations", value: "" });
  });

  it("reads the profile and updates it with a urlencoded body under a multipart type", async () => {
    const profile = await sdk.get("v1/profile");
    expect(profile.body).toMatchObject({ username: h.svc.apiUser, role: "owner", userpk: 0 });
    expect(profile.body).not.toHaveProperty("token");
    const upd = await sdk.post("v1/profile/update", { name: "Sandbox Owner", bio: "hello" });
    expect(upd.body.result).toBe("success");
    expect((await sdk.get("v1/profile")).body).toMatchObject({ name: "Sandbox Owner", bio: "hello" });
  });
});
