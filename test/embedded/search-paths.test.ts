import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./helpers.js";
import { searchFromPath } from "../../src/embedded/search-path.js";

describe("v1 search paths: spellings", () => {
  it("reads the search language with + and %20 as spaces", () => {
    expect(searchFromPath("brand:=Nike+stock:>0")).toBe("brand:=Nike stock:>0");
    expect(searchFromPath("brand:=Nike%20stock:>0")).toBe("brand:=Nike stock:>0");
    expect(searchFromPath('brand:=%22Bolt%20%26%20Nut%22')).toBe('brand:="Bolt & Nut"');
  });

  it("reads &-joined terms with whole values, quoting them for the parser", () => {
    expect(searchFromPath("brand:=Probe&sku:=SDK-A")).toBe("brand:=Probe sku:=SDK-A");
    expect(searchFromPath("brand:=Bolt+%26+Nut")).toBe('brand:="Bolt & Nut"');
    expect(searchFromPath("title:=Say+%22hi%22&price:>5")).toBe('title:="Say \\"hi\\"" price:>5');
  });
});

describe("embedded service: GET /v1/search/items", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    for (let i = 1; i <= 12; i += 1) {
      await h.form("/v1/editor/items/add", { identifier: "guid", guid: `S${i}`, title: `Item ${i}`, brand: i <= 10 ? "Bolt & Nut" : "Other", price: String(i) });
    }
  });
  afterAll(() => h.close());

  const all = async (path: string): Promise<unknown> => (await h.json("GET", path)).body.all;

  it("finds a quoted value and the same value as the client encodes it", async () => {
    expect(await all("/v1/search/items/brand:=%22Bolt+%26+Nut%22")).toBe(10);
    expect(await all("/v1/search/items/brand:=Bolt+%26+Nut")).toBe(10);
  });

  it("ANDs several terms joined by +, %20 or &", async () => {
    expect(await all("/v1/search/items/brand:=Other+price:>11")).toBe(1);
    expect(await all("/v1/search/items/brand:=Other%20price:>11")).toBe(1);
    expect(await all("/v1/search/items/brand:=Other&price:>11")).toBe(1);
  });

  it("answers the listing for the path without a query", async () => {
    expect(await all("/v1/search/items")).toBe(12);
    expect(await all("/v1/search/items/")).toBe(12);
  });

  it("a search the parser cannot read is a 400 that points at the character", async () => {
    const { status, body } = await h.json("GET", "/v1/search/items/(brand:=Other");
    expect(status).toBe(400);
    expect(body.result).toBe("failure");
    expect(String(body.message)).toMatch(/position \d+/);
  });
});
