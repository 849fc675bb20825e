import { describe, expect, it } from "vitest";
import {
  ALL_FIELDS,
  formatSearch,
  isMatchAll,
  matchesSearch,
  parseSearch,
  searchFields,
  usesClock,
  type SearchNode,
  type SearchRecord,
} from "../../src/search/index.js";

/** Small seeded generator, so a failing case can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = ["brand", "stock", "price", "title", "billing.city", "items.sku", "items.quantity", "dateupdatedutc", "my field"];
const OPS = ["=", "-=", "!=", ">", ">=", "<", "<=", "", "-"];
const VALUES = ["Nike", "0", "1", "12.5", "-3", "0700", "713752E1", "a%", "%b", '"Out of Stock"', "2026-11-01", '"-1 day"', "x"];
const RECORD_VALUES: unknown[] = ["Nike", "0", "12.5", "", null, true, false, 7, "2026-11-02", "Out of stock", "abc", "0700"];

interface Generated {
  text: string;
  fields: string[];
  keywords: boolean;
}

function generate(rand: () => number): Generated {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const fields: string[] = [];
  let keywords = false;
  const term = (): string => {
    if (rand() < 0.1) {
      keywords = true;
      return pick(["nike", "abc", '"out of"']);
    }
    const field = pick(FIELDS);
    if (!fields.includes(field)) fields.push(field);
    const op = pick(OPS);
    const needsValue = op !== "=" && op !== "-=" && op !== "!=";
    const value = needsValue || rand() < 0.8 ? pick(VALUES) : "";
    const written = field.includes(" ") ? `"${field}"` : field;
    return `${written}:${op}${value}`;
  };
  const group = (depth: number): string => {
    const count = 1 + Math.floor(rand() * 3);
    const members: string[] = [];
    for (let i = 0; i < count; i += 1) members.push(depth < 3 && rand() < 0.3 ? `(${group(depth + 1)})` : term());
    return members.join(" ");
  };
  return { text: group(0), fields, keywords };
}

function randomRecord(rand: () => number): SearchRecord {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  return {
    brand: pick(RECORD_VALUES),
    stock: pick(RECORD_VALUES),
    price: pick(RECORD_VALUES),
    title: pick(RECORD_VALUES),
    dateupdatedutc: pick(RECORD_VALUES),
    "my field": pick(RECORD_VALUES),
    billing: { city: pick(RECORD_VALUES) },
    items: [{ sku: pick(RECORD_VALUES), quantity: pick(RECORD_VALUES) }, { sku: pick(RECORD_VALUES) }],
  };
}

/** Only the top-level keys the listed fields start from. */
function project(record: SearchRecord, fields: string[]): SearchRecord {
  const keep = new Set(fields.flatMap((f) => [f, f.split(".")[0] ?? f]));
  return Object.fromEntries(Object.entries(record).filter(([key]) => keep.has(key)));
}

const NOW = new Date("2026-11-15T12:00:00Z");

describe("searchFields lists the fields an expression reads", () => {
  it.each([
    ["", []],
    ["brand:=Nike", ["brand"]],
    ["stock:>0 (brand:=Nike brand:=Adidas) condition:=New", ["stock", "brand", "condition"]],
    ["billing.city:=Paris items.sku:A%", ["billing.city", "items.sku"]],
    ['"my field":=x upc:=', ["my field", "upc"]],
    ["shoe brand:=x", [ALL_FIELDS, "brand"]],
  ])("%j → %j", (text, expected) => {
    expect(searchFields(parseSearch(text))).toEqual(expected);
  });

  it("holds for 500 generated expressions: the list is exact, and nothing else changes the outcome", () => {
    const outcomes = { true: 0, false: 0 };
    for (let seed = 1; seed <= 500; seed += 1) {
      const rand = random(seed);
      const generated = generate(rand);
      const node = parseSearch(generated.text);
      const expected = generated.keywords ? [...generated.fields, ALL_FIELDS] : generated.fields;
      const listed = searchFields(node);
      expect([...listed].sort(), `seed ${seed}: ${generated.text}`).toEqual([...expected].sort());
      expect(new Set(listed).size).toBe(listed.length);
      if (generated.keywords) continue;
      for (let i = 0; i < 5; i += 1) {
        const record = randomRecord(rand);
        const outcome = matchesSearch(node, record, { now: NOW });
        outcomes[outcome ? "true" : "false"] += 1;
        const noise = { ...record, zzz: "Nike", other: { sku: "x" }, stock2: 5 };
        expect(matchesSearch(node, noise, { now: NOW }), `seed ${seed}: ${generated.text}`).toBe(outcome);
        expect(matchesSearch(node, project(record, listed), { now: NOW }), `seed ${seed}: ${generated.text}`).toBe(outcome);
        const copy = JSON.parse(JSON.stringify(node)) as SearchNode;
        expect(matchesSearch(copy, record, { now: NOW })).toBe(outcome);
      }
    }
    // The generated cases must exercise both answers, or the property says nothing.
    expect(outcomes.true).toBeGreaterThan(200);
    expect(outcomes.false).toBeGreaterThan(200);
  });

  it("lists fields in the order first written", () => {
    expect(searchFields(parseSearch("b:=1 (a:=1 b:=2) c:x a:-y"))).toEqual(["b", "a", "c"]);
  });
});

describe("formatSearch writes a tree back as text", () => {
  it.each([
    ["", ""],
    ["brand:=Nike", "brand:=Nike"],
    ["stock:>0 (brand:=Nike brand:=Adidas) condition:=New", "stock:>0 (brand:=Nike brand:=Adidas) condition:=New"],
    ["(a:=1 (b:=2 c:=3))", "(a:=1 (b:=2 c:=3))"],
    ["status:!=draft", "status:-=draft"],
    ['vendorstock:="Out of Stock"', 'vendorstock:="Out of Stock"'],
    ['title:="5\\" pipe"', 'title:="5\\" pipe"'],
    ["sku:ABC%", 'sku:"abc%"'],
    ['title:"100\\%"', 'title:"100\\%"'],
    ['"my field":=', '"my field":='],
    ['"running shoe" nike', '"running shoe" nike'],
    ['title:"=x"', 'title:"=x"'],
    ['title:-"-x"', 'title:-"-x"'],
    ['date:>"-1 day"', 'date:>"-1 day"'],
  ])("%j → %j", (text, expected) => {
    expect(formatSearch(parseSearch(text))).toBe(expected);
  });

  it("writes flat what alternation makes equivalent in hand-built trees", () => {
    const term = (field: string): SearchNode => parseSearch(`${field}:=1`);
    const node: SearchNode = { type: "and", nodes: [term("a"), { type: "and", nodes: [term("b"), term("c")] }] };
    expect(formatSearch(node)).toBe("a:=1 b:=1 c:=1");
    expect(formatSearch({ type: "or", nodes: [term("a"), { type: "or", nodes: [term("b")] }] })).toBe("(a:=1 b:=1)");
  });

  it("round-trips 500 generated expressions to the same meaning", () => {
    for (let seed = 1000; seed < 1500; seed += 1) {
      const rand = random(seed);
      const { text } = generate(rand);
      const node = parseSearch(text);
      const written = formatSearch(node);
      const again = parseSearch(written);
      expect(formatSearch(again), `seed ${seed}: ${text}`).toBe(written);
      expect(searchFields(again)).toEqual(searchFields(node));
      for (let i = 0; i < 5; i += 1) {
        const record = randomRecord(rand);
        expect(matchesSearch(again, record, { now: NOW }), `seed ${seed}: ${text} → ${written}`).toBe(
          matchesSearch(node, record, { now: NOW }),
        );
      }
    }
  });
});

describe("tree inspection", () => {
  it.each([
    ["", false, true],
    ["brand:=x", false, false],
    ["date:>2026-11-01", false, false],
    ['(a:=1 date:>"-1 day")', true, false],
    ["date:<today", true, false],
  ])("%j: uses the clock %s, matches all %s", (text, clock, all) => {
    const node = parseSearch(text);
    expect(usesClock(node)).toBe(clock);
    expect(isMatchAll(node)).toBe(all);
  });
});
