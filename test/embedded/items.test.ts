import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ordinals, startHarness, type Harness } from "./helpers.js";

describe("embedded service: v1 items (v1 parts 2, 4.2, 7)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    // 120 items: prices 1..120, every third one a Nike.
    for (let i = 1; i <= 120; i += 1) {
      const { body } = await h.form("/v1/editor/items/add", {
        identifier: "guid",
        guid: `G${String(i).padStart(3, "0")}`,
        title: `Item ${i}`,
        price: String(i),
        brand: i % 3 === 0 ? "Nike" : "Other",
      });
      expect(body.result).toBe("success");
    }
  });
  afterAll(() => h.close());

  it("the editor listing gives 50 items per page keyed 1, 2, … with all and time", async () => {
    const { status, body } = await h.json("GET", "/v1/editor/items?page=1");
    expect(status).toBe(200);
    const entries = ordinals(body);
    expect(entries).toHaveLength(50);
    expect(entries[0]?.[0]).toBe("1");
    expect(entries[49]?.[0]).toBe("50");
    expect(body.all).toBe(120);
    expect(typeof body.time).toBe("number");
    const page3 = ordinals((await h.json("GET", "/v1/editor/items?page=3")).body);
    expect(page3).toHaveLength(20);
    expect(page3[0]?.[0]).toBe("101");
  });

  it("sort=price_ sorts descending, sort=price ascending, numerically", async () => {
    const desc = ordinals((await h.json("GET", "/v1/editor/items?sort=price_")).body);
    expect(desc.slice(0, 3).map(([, item]) => item.price)).toEqual(["120", "119", "118"]);
    const asc = ordinals((await h.json("GET", "/v1/editor/items?sort=price")).body);
    expect(asc.slice(0, 3).map(([, item]) => item.price)).toEqual(["1", "2", "3"]);
  });

  it("sorting by a field that is not sortable is refused with the failure envelope", async () => {
    const { status, body } = await h.json("GET", "/v1/editor/items?sort=colour");
    expect(status).toBe(400);
    expect(body).toMatchObject({ result: "failure" });
    expect(String(body.message)).toContain("price");
  });

  it("search with the search language, paged", async () => {
    const { body } = await h.json("GET", `/v1/search/items/${encodeURIComponent("brand:=Nike price:>30")}`);
    expect(body.all).toBe(30);
    const items = ordinals(body);
    expect(items.every(([, it]) => it.brand === "Nike" && Number(it.price) > 30)).toBe(true);
    const keyword = await h.json("GET", `/v1/search/items/${encodeURIComponent("Item 77")}`);
    expect(keyword.body.all).toBeGreaterThanOrEqual(1);
    const bad = await h.json("GET", `/v1/search/items/${encodeURIComponent("(brand:=Nike")}`);
    expect(bad.status).toBe(400);
    expect(bad.body.result).toBe("failure");
    // A long search (a list of identifiers) is a search, not a 414.
    const ids = Array.from({ length: 40 }, (_, i) => `sku:=NO-SUCH-${i}`).join(" ");
    const long = await h.json("GET", `/v1/search/items/${encodeURIComponent(`brand:=Nike (${ids})`)}`);
    expect(long.status).toBe(200);
  });

  it("get by guid and by sku returns the full record", async () => {
    const { status, body } = await h.json("GET", "/v1/editor/items/edit?guid=G005");
    expect(status).toBe(200);
    expect(body).toMatchObject({ guid: "G005", title: "Item 5", price: "5", sku: "G005", id: expect.stringMatching(/^\d+$/) });
    expect(body.result).toBeUndefined();
    const bySku = await h.json("GET", "/v1/editor/items/edit?sku=G006");
    expect(bySku.body).toMatchObject({ guid: "G006" });
  });

  it("a missing guid is HTTP 200 with the missing-record envelope {time, type:'items'}", async () => {
    const { status, body } = await h.json("GET", "/v1/editor/items/edit?guid=NOPE");
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(["time", "type"]);
    expect(body.type).toBe("items");
  });

  it("GET /editor/items/edit with neither guid nor sku behaves like the listing", async () => {
    const { body } = await h.json("GET", "/v1/editor/items/edit?page=2&sort=price_");
    expect(body.all).toBeGreaterThanOrEqual(120);
    expect(ordinals(body)[0]?.[0]).toBe("51");
  });

  it("get by numeric id; a missing or non-numeric id is HTTP 200 with the missing-record envelope", async () => {
    const found = await h.json("GET", "/v1/editor/items/edit?guid=G010");
    const id = String(found.body.id);
    expect((await h.json("GET", `/v1/editor/items/edit/${id}`)).body).toMatchObject({ guid: "G010" });
    for (const bad of ["999999", "abc"]) {
      const { status, body } = await h.json("GET", `/v1/editor/items/edit/${bad}`);
      expect(status).toBe(200);
      expect(body).toEqual({ time: expect.any(Number), type: "items" });
    }
  });

  it("edit changes only the fields given; a blank field resets it", async () => {
    await h.form("/v1/editor/items/edit", { identifier: "guid", guid: "G001", price: "9.99", color: "red" });
    let item = (await h.json("GET", "/v1/editor/items/edit?guid=G001")).body as Record<string, string>;
    expect(item).toMatchObject({ price: "9.99", color: "red", title: "Item 1", brand: "Other" });
    await h.form("/v1/editor/items/edit", { identifier: "guid", guid: "G001", color: "" });
    item = (await h.json("GET", "/v1/editor/items/edit?guid=G001")).body as Record<string, string>;
    expect(item.color).toBeUndefined();
    expect(item.price).toBe("9.99");
  });

  it("add requires a title and refuses an existing guid", async () => {
    const noTitle = await h.form("/v1/editor/items/add", { identifier: "guid", guid: "NEW1" });
    // Refused changes are HTTP 200 with the failure envelope: v1 callers read `result`.
    expect(noTitle.status).toBe(200);
    expect(noTitle.body).toEqual({ result: "failure", message: expect.stringContaining("title"), time: expect.any(Number) });
    const dup = await h.form("/v1/editor/items/add", { identifier: "guid", guid: "G002", title: "again" });
    expect(dup.body).toMatchObject({ result: "failure" });
    expect(String(dup.body.message)).toContain("already exists");
  });

  it("start lists, end ends, relist lists again, delete removes", async () => {
    await h.form("/v1/editor/items/start", { identifier: "guid", guid: "S1", title: "Started" });
    const listed = async (): Promise<string | undefined> => ((await h.json("GET", "/v1/editor/items/edit?guid=S1")).body as Record<string, string> | undefined)?.listed;
    expect(await listed()).toBe("1");
    expect((await h.form("/v1/editor/items/end", { identifier: "guid", guid: "S1" })).body.result).toBe("success");
    expect(await listed()).toBe("0");
    expect((await h.form("/v1/editor/items/relist", { identifier: "guid", guid: "S1" })).body.result).toBe("success");
    expect(await listed()).toBe("1");
    expect((await h.form("/v1/editor/items/delete", { identifier: "guid", guid: "S1" })).body.result).toBe("success");
    expect((await h.json("GET", "/v1/editor/items/edit?guid=S1")).body).toEqual({ time: expect.any(Number), type: "items" });
  });

  it("edit, end, relist and delete of a missing item fail with the failure envelope", async () => {
    for (const action of ["edit", "end", "relist", "delete"]) {
      const { body } = await h.form(`/v1/editor/items/${action}`, { identifier: "guid", guid: "MISSING" });
      expect(body).toMatchObject({ result: "failure" });
    }
  });

  it("items can carry the account's own fields and be found by them", async () => {
    await h.form("/v1/editor/items/edit", { identifier: "guid", guid: "G050", vendorstock: "Out of Stock" });
    const { body } = await h.json("GET", `/v1/search/items/${encodeURIComponent('vendorstock:="Out of Stock"')}`);
    expect(body.all).toBe(1);
    expect(ordinals(body)[0]?.[1].guid).toBe("G050");
  });
});
