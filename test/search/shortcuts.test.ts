import { describe, expect, it } from "vitest";
import { compileSearch, ORDER_STATUSES, parseSearch, quoteSearchValue, shortcutSearch } from "../../src/search/index.js";

describe("order retrieval shortcuts (/v3/orders/<segment>)", () => {
  it.each([
    ["shipped", "shippingstatus:=COMPLETE"],
    ["SHIPPED", "shippingstatus:=COMPLETE"],
    ["paid", "paymentstatus:=COMPLETE"],
    ["Paid", "paymentstatus:=COMPLETE"],
    ["incomplete", "status:=INCOMPLETE"],
    ["Ready", "status:=READY"],
    ["pending", "status:=PENDING"],
    ["ORDERED", "status:=ORDERED"],
    ["dropshipped", "status:=DROPSHIPPED"],
    ["canceled", "status:=CANCELED"],
    ["refunded", "status:=REFUNDED"],
    ["complete", "status:=COMPLETE"],
    ["archived", "status:=ARCHIVED"],
    ["ebay", "channel:=ebay"],
    ["Amazon", "channel:=Amazon"],
    ["my shop", 'channel:="my shop"'],
    ["50%off", 'channel:="50\\%off"'],
  ])("%s → %s", (segment, expected) => {
    expect(shortcutSearch(segment)).toBe(expected);
  });

  it.each(["12345", "0", " 42 ", "", "  ", "lineitem"])("%j is not a search (an oid, blank, or the line-item listing)", (segment) => {
    expect(shortcutSearch(segment)).toBeUndefined();
  });

  it("covers every order status of the seed", () => {
    for (const status of ORDER_STATUSES) expect(shortcutSearch(status.toLowerCase())).toBe(`status:=${status}`);
  });

  it("produces searches that select the right orders", () => {
    const orders = [
      { oid: "1", status: "COMPLETE", shippingstatus: "COMPLETE", paymentstatus: "COMPLETE", channel: "ebay" },
      { oid: "2", status: "READY", shippingstatus: "PENDING", paymentstatus: "COMPLETE", channel: "my shop" },
      { oid: "3", status: "INCOMPLETE", shippingstatus: "INCOMPLETE", paymentstatus: "PENDING", channel: "50%off" },
    ];
    const pick = (segment: string): string[] =>
      orders.filter(compileSearch(shortcutSearch(segment) ?? "oid:=none")).map((o) => o.oid);
    expect(pick("shipped")).toEqual(["1"]);
    expect(pick("paid")).toEqual(["1", "2"]);
    expect(pick("ready")).toEqual(["2"]);
    expect(pick("my shop")).toEqual(["2"]);
    expect(pick("50%off")).toEqual(["3"]);
    expect(pick("ebay")).toEqual(["1"]);
  });
});

describe("quoteSearchValue", () => {
  it.each(["plain", "two words", 'a "quote"', "back\\slash", "100%", "(x)", "", " padded "])(
    "writes %j so the parser reads it back",
    (value) => {
      const node = parseSearch(`f:=${quoteSearchValue(value)}`);
      expect(node).toMatchObject({ type: "term", op: "eq", value: { raw: value, pattern: null } });
    },
  );
});
