import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ordinals, startHarness, type Harness } from "./helpers.js";
import { SdkReplay } from "./sdk-compat-client.js";

describe("the official client's item calls against the embedded service", () => {
  let h: Harness;
  let sdk: SdkReplay;
  beforeAll(async () => {
    h = await startHarness();
    sdk = new SdkReplay(h.svc.url, h.svc.apiUser, h.svc.apiToken);
  });
  afterAll(() => h.close());

  it("signs in with urlencoded user and pass and reads the token back", async () => {
    const { status, body } = await sdk.authenticate(h.svc.apiUser, h.svc.apiToken);
    expect(status).toBe(200);
    expect(body.token).toBe(h.svc.apiToken);
  });

  it("adds and edits items through the json= multipart wrapper, by sku", async () => {
    const add = await sdk.postRecord("v1/editor/items/add", { identifier: "guid", guid: "SDK-A", sku: "SDK-A", title: "Probe A", brand: "Probe", price: 5 });
    expect(add.body).toMatchObject({ result: "success", guid: "SDK-A" });
    await sdk.postRecord("v1/editor/items/add", { identifier: "guid", guid: "SDK-B", sku: "SDK-B", title: "Probe B", brand: "Probe" });
    const edit = await sdk.postRecord("v1/editor/items/edit", { identifier: "sku", sku: "SDK-A", price: "7.50" });
    expect(edit.status).toBe(200);
    expect(edit.body.result).toBe("success");
    const read = await sdk.get("v1/editor/items/edit?sku=SDK-A");
    expect(read.body).toMatchObject({ guid: "SDK-A", price: "7.50", title: "Probe A" });
  });

  it("takes query arguments after the editor path (importmedia=…&)", async () => {
    const res = await sdk.postRecord("v1/editor/items/edit?importmedia=1&", { identifier: "guid", guid: "SDK-B", stock: "3" });
    expect(res.body.result).toBe("success");
  });

  it("lists items with empty page and sort and reads one by id", async () => {
    const list = await sdk.get("v1/editor/items?page=&sort=");
    expect(list.status).toBe(200);
    expect(list.body.all).toBe(2);
    const first = ordinals(list.body)[0]?.[1];
    const byId = await sdk.get(`v1/editor/items/edit/${first?.id ?? ""}`);
    expect(byId.body.guid).toBe(first?.guid);
  });

  it("searches with two &-joined terms as the client builds them", async () => {
    const res = await sdk.search("items", { brand: "Probe", sku: "SDK-A" });
    expect(res.status).toBe(200);
    expect(res.body.all).toBe(1);
    expect(ordinals(res.body)[0]?.[1].guid).toBe("SDK-A");
  });

  it("searches a value with spaces and & as the client encodes it (+, %26)", async () => {
    await sdk.postRecord("v1/editor/items/add", { identifier: "guid", guid: "BN-1", title: "Washer", brand: "Bolt & Nut" });
    const res = await sdk.search("items", { brand: "Bolt & Nut" });
    expect(res.body.all).toBe(1);
  });

  it("searches one term whose value holds spaces or non-ASCII letters", async () => {
    await sdk.postRecord("v1/editor/items/add", { identifier: "guid", guid: "SP-1", title: "Seed One", brand: "Größe – ✓" });
    const spaced = await sdk.search("items", { title: "Seed One" });
    expect(spaced.body.all).toBe(1);
    const accented = await sdk.search("items", { brand: "Größe – ✓" });
    expect(ordinals(accented.body)[0]?.[1].guid).toBe("SP-1");
  });

  it("its bulk-shaped write (posted to items/) answers the sandbox envelope, not a 404", async () => {
    const res = await sdk.postRecord("v1/editor/items/", { 1: { identifier: "guid", guid: "BULK-1", title: "Bulk" } });
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ result: "failure", sandbox: true });
  });

  it("the search path without a query is the listing", async () => {
    const res = await sdk.search("items", {});
    expect(res.status).toBe(200);
    expect(res.body.all).toBe(4);
  });
});
