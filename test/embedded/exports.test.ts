import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identifierLookup } from "../../src/embedded/identifier-search.js";
import { startHarness, waitFor, type Harness } from "./helpers.js";

describe("embedded service: v1 bulk exports (v1 part 4.5, service.md)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    for (let i = 1; i <= 30; i += 1) {
      await h.form("/v1/editor/items/add", { identifier: "guid", guid: `E${i}`, title: `Export, "${i}"`, price: String(i), brand: i % 2 ? "Odd" : "Even" });
    }
    await h.json("POST", "/v3/orders", {
      ordernumber: "X1", channel: "shop", total: "3", billing: { city: "Oslo" },
      items: [{ sku: "E1", price: "1", quantity: "1" }, { sku: "E2", price: "2", quantity: "1" }],
    });
  });
  afterAll(() => h.close());

  async function exported(fields: Record<string, string>): Promise<string> {
    const { status, body } = await h.form("/v1/bulk/exports", fields);
    expect(status).toBe(200);
    expect(body).toMatchObject({ result: "success", bulk_file: expect.any(String) });
    const done = await waitFor(async () => {
      const s = (await h.json("GET", `/v1/bulk/exports/${String(body.bulk_file)}`)).body;
      return s.status === "complete" ? s : undefined;
    }, "export");
    const res = await fetch(String(done.url));
    expect(res.status).toBe(200);
    return res.text();
  }

  it("items with search and fields; the identifier is always included and values are quoted", async () => {
    const csv = await exported({ type: "items", search: "brand:=Even price:<7", fields: "title,price" });
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe("guid,title,price");
    expect(lines.slice(1)).toEqual(['E2,"Export, ""2""",2', 'E4,"Export, ""4""",4', 'E6,"Export, ""6""",6']);
  });

  it("identifiers only, without a search: every item, read without its fields, the same rows as with a search that matches all", async () => {
    const fast = await exported({ type: "items", search: "", fields: "sku,id" });
    const lines = fast.trim().split("\r\n");
    expect(lines[0]).toBe("guid,sku,id");
    expect(lines).toHaveLength(31);
    const full = await exported({ type: "items", search: "price:>0", fields: "sku,id" });
    expect(full).toBe(fast);
  });

  it("guid and id only: read from the guid index, the same rows as the full scan", async () => {
    const fast = (await exported({ type: "items", search: "", fields: "id" })).trim().split("\r\n");
    const full = (await exported({ type: "items", search: "price:>0", fields: "id" })).trim().split("\r\n");
    expect(fast[0]).toBe("guid,id");
    expect(fast).toHaveLength(31);
    expect([...fast].sort()).toEqual([...full].sort());
    expect(new Set(fast.slice(1).map((l) => l.split(",")[1])).size).toBe(30);
  });

  it("named fields without a search: read by SQLite out of each item's JSON, the same rows as the full scan", async () => {
    const fast = await exported({ type: "items", search: "", fields: "title,price,nothing,id,brand" });
    const lines = fast.trim().split("\r\n");
    expect(lines[0]).toBe("guid,title,price,nothing,id,brand");
    expect(lines[2]).toMatch(/^E2,"Export, ""2""",2,,\d+,Even$/);
    expect(lines).toHaveLength(31);
    expect(await exported({ type: "items", search: "price:>0", fields: "title,price,nothing,id,brand" })).toBe(fast);
  });

  it("items named by identifier: read by their identifiers, the same rows as a search that tests every item", async () => {
    const named = '(guid:=E3 guid:=e5 guid:=" E7 " guid:=E99)';
    const lines = (await exported({ type: "items", search: named, fields: "title,price" })).trim().split("\r\n");
    const full = (await exported({ type: "items", search: `price:>0 ${named}`, fields: "title,price" })).trim().split("\r\n");
    expect(lines.slice(1).map((l) => l.split(",")[0]).sort()).toEqual(["E3", "E5", "E7"]);
    expect([...lines].sort()).toEqual([...full].sort());
    expect(identifierLookup(named)).toEqual({ field: "guid", texts: new Set(["e3", "e5", "e7", "e99"]) });
    for (const other of [`price:>0 ${named}`, "guid:=12", 'guid:="E1%"', "(guid:=E1 sku:=E2)", "guid:E1"]) expect(identifierLookup(other)).toBeNull();
    const one = (await exported({ type: "items", search: "guid:=E4", fields: "price" })).trim().split("\r\n");
    expect(one).toEqual(["guid,price", "E4,4"]);
  });

  it("orders flatten to one row per line with dotted columns", async () => {
    const csv = await exported({ type: "orders", search: "channel:=shop", fields: "ordernumber,billing.city,items.sku" });
    expect(csv.trim().split("\r\n").slice(1).map((l) => l.split(",").slice(1))).toEqual([
      ["X1", "Oslo", "E1"],
      ["X1", "Oslo", "E2"],
    ]);
    expect(csv.startsWith("oid,ordernumber,billing.city,items.sku")).toBe(true);
  });

  it("without fields, every field of the items", async () => {
    const csv = await exported({ type: "items", search: "guid:=E3" });
    const [head, row] = csv.trim().split("\r\n");
    expect(head?.split(",")).toEqual(expect.arrayContaining(["guid", "id", "sku", "title", "price", "brand", "dateupdated"]));
    expect(row).toContain("E3");
  });

  it("refuses an unknown type and a bad search at once", async () => {
    expect((await h.form("/v1/bulk/exports", { type: "pages" })).status).toBe(400);
    const bad = await h.form("/v1/bulk/exports", { type: "items", search: "(open" });
    expect(bad.status).toBe(400);
    expect(bad.body.result).toBe("failure");
    expect((await h.json("GET", "/v1/bulk/exports/nope.csv")).status).toBe(404);
  });
});
