import { describe, expect, it } from "vitest";
import { compileSearch, matchesSearch, parseSearch, type SearchNode, type SearchRecord } from "../../src/search/index.js";

type Row = [expression: string, record: SearchRecord, expected: boolean];

function table(rows: Row[]): void {
  it.each(rows)("%s on %j → %s", (expression, record, expected) => {
    expect(matchesSearch(parseSearch(expression), record)).toBe(expected);
    expect(compileSearch(expression)(record)).toBe(expected);
  });
}

const shoe = { stock: "5", brand: "Adidas", condition: "New", title: "Trail Shoe" };

describe("combining: space is AND, parentheses are OR, nesting alternates", () => {
  table([
    ["stock:>0 condition:=New brand:=Adidas", shoe, true],
    ["stock:>0 condition:=Used brand:=Adidas", shoe, false],
    ["(brand:=Nike brand:=Adidas brand:=Puma)", shoe, true],
    ["(brand:=Nike brand:=Puma)", shoe, false],
    ["stock:>0 (brand:=Nike brand:=Adidas) condition:=New", shoe, true],
    ["stock:>0 (brand:=Nike brand:=Adidas) condition:=Used", shoe, false],
    ["stock:>9 (brand:=Nike brand:=Adidas) condition:=New", shoe, false],
    ["(brand:=Adidas)", shoe, true],
    ["((brand:=Adidas))", shoe, true],
    // inside an OR group a nested group is an AND of its members
    ["(brand:=Nike (brand:=Adidas stock:>0))", shoe, true],
    ["(brand:=Nike (brand:=Adidas stock:>9))", shoe, false],
    // and one level deeper it is an OR again
    ["(brand:=Nike (brand:=Adidas (stock:>9 condition:=New)))", shoe, true],
    ["(brand:=Nike (brand:=Adidas (stock:>9 condition:=Used)))", shoe, false],
    ["(brand:=Nike brand:=Puma) (condition:=New)", shoe, false],
    ["(brand:=Nike brand:=Adidas)(condition:=New condition:=Used)", shoe, true],
    ["  stock:>0\n\tcondition:=New  ", shoe, true],
    ["(trail running) shoe", shoe, true],
  ]);

  it.each(["", "   ", "\n\t"])("blank text %j matches every record", (text) => {
    const node = parseSearch(text);
    expect(node).toEqual({ type: "and", nodes: [] });
    expect(matchesSearch(node, {})).toBe(true);
    expect(compileSearch(text)({ any: "thing" })).toBe(true);
  });

  it("parses to plain data that survives JSON", () => {
    const text = 'stock:>0 (brand:=Nike (brand:=Adidas date:>"-1 day")) title:a%b "x y"';
    const node = parseSearch(text);
    const copy = JSON.parse(JSON.stringify(node)) as SearchNode;
    expect(copy).toEqual(node);
    const now = new Date("2026-11-15T12:00:00Z");
    const record = { stock: 2, brand: "adidas", date: "2026-11-15", title: "ab", note: "X Y" };
    expect(matchesSearch(copy, record, { now })).toBe(true);
    expect(matchesSearch(node, record, { now })).toBe(true);
    expect(node).toMatchObject({
      type: "and",
      nodes: [
        { type: "term", field: "stock", op: "gt", value: { number: 0 } },
        { type: "or", nodes: [{ type: "term", op: "eq" }, { type: "and" }] },
        { type: "term", field: "title", op: "contains", value: { pattern: ["a", "b"] } },
        { type: "keyword", value: { text: "x y", quoted: true } },
      ],
    });
  });
});

describe("dotted fields and arrays", () => {
  const order: SearchRecord = {
    oid: "17",
    billing: { city: "Paris", postalcode: "75001" },
    shipping: { city: "Lyon" },
    items: [
      { sku: "A1", quantity: "2", itemdetails: { product: { brand: "Acme" }, "order-item-id": "x-1" } },
      { sku: "B2", quantity: "1" },
    ],
    internalnotes: { "2026-11-01 08:00:00": "called the buyer about a refund" },
    refunds: [],
    "flat.key": "dotted column",
  };
  table([
    ["billing.city:=paris", order, true],
    ["billing.city:=lyon", order, false],
    ["shipping.city:=lyon billing.postalcode:=75001", order, true],
    ["billing.street1:=", order, true],
    ["nothere.city:=", order, true],
    ["oid.city:=", order, true],
    // across an array: holds when any element holds
    ["items.sku:=B2", order, true],
    ["items.sku:=C3", order, false],
    ["items.quantity:>1", order, true],
    ["items.quantity:>2", order, false],
    ["items.sku:A%", order, true],
    // negations hold when no element matches
    ["items.sku:-=B2", order, false],
    ["items.sku:!=C3", order, true],
    ["items.sku:-B", order, false],
    ["items.sku:-C", order, true],
    // a field missing in one element reads as empty there
    ["items.itemdetails.product.brand:=acme", order, true],
    ["items.itemdetails.product.brand:=", order, true],
    ["items.itemdetails.product.brand:-=", order, false],
    ["items.itemdetails.order-item-id:=x-1", order, true],
    ["items.1.sku:=B2", order, true],
    ["items.0.sku:=B2", order, false],
    // a path ending on an object or an array reads everything inside
    ["internalnotes:refund", order, true],
    ["billing:=paris", order, true],
    ["refunds:=", order, true],
    ["refunds:-=", order, false],
    ["items:=", order, false],
    ["flat.key:dotted", order, true],
    // a nested key that itself holds a dot
    ["details.ship.by:=2026-11-20", { details: { "ship.by": "2026-11-20" } }, true],
    ["details.ship.by:=", { details: { "ship.by": "2026-11-20" } }, false],
    ["Billing.City:=paris", order, true],
    ["OID:=17", order, true],
  ]);

  it("looks at every scalar field, nested too, for a keyword", () => {
    expect(compileSearch("x-1")(order)).toBe(true);
    expect(compileSearch("75001")(order)).toBe(true);
    expect(compileSearch("buyer")(order)).toBe(true);
    expect(compileSearch("2026-11-01")(order)).toBe(false);
    expect(compileSearch("zzz")(order)).toBe(false);
  });

  it("walks nested arrays of arrays", () => {
    const record = { grid: [[{ v: "a" }], [{ v: "b" }, { v: "c" }]] };
    expect(compileSearch("grid.v:=c")(record)).toBe(true);
    expect(compileSearch("grid.v:-=d")(record)).toBe(true);
    expect(compileSearch("grid.v:-=a")(record)).toBe(false);
  });
});
