import { describe, expect, it } from "vitest";
import { compileSearch, matchesSearch, parseSearch, type SearchRecord } from "../../src/search/index.js";

type Row = [expression: string, record: SearchRecord, expected: boolean];

function table(rows: Row[]): void {
  it.each(rows)("%s on %j → %s", (expression, record, expected) => {
    expect(matchesSearch(parseSearch(expression), record)).toBe(expected);
    // The one-shot and the compiled forms must agree.
    expect(compileSearch(expression)(record)).toBe(expected);
  });
}

describe("search.md terms, one row each", () => {
  describe("f:=v equals", () => {
    table([
      ["brand:=Nike", { brand: "Nike" }, true],
      ["brand:=Nike", { brand: "Nikes" }, false],
      ["brand:=Nike", { brand: "Air Nike" }, false],
      ["brand:=Nike", {}, false],
      ["brand:=nike", { brand: "NIKE" }, true],
      ["brand:=NIKE", { brand: "  nike  " }, true],
    ]);
  });

  describe("f:-=v and f:!=v do not equal", () => {
    table([
      ["status:-=draft", { status: "draft" }, false],
      ["status:-=draft", { status: "active" }, true],
      ["status:!=draft", { status: "Draft" }, false],
      ["status:!=draft", { status: "live" }, true],
      ["status:!=draft", {}, true],
    ]);
  });

  describe("f:>v f:>=v f:<v f:<=v compare", () => {
    table([
      ["price:>100", { price: "100.01" }, true],
      ["price:>100", { price: "100" }, false],
      ["price:>=100", { price: "100" }, true],
      ["price:>=100", { price: "99.99" }, false],
      ["price:<5", { price: "4.5" }, true],
      ["price:<5", { price: "5" }, false],
      ["price:<=5", { price: "5.00" }, true],
      ["price:<=5", { price: "5.01" }, false],
      ["stock:>0", { stock: 3 }, true],
      ["stock:>-3.5", { stock: "-3" }, true],
      ["stock:<-3.5", { stock: "-4" }, true],
      // numeric, not text: "9" > "10" as text but not as numbers
      ["stock:>10", { stock: "9" }, false],
      ["stock:<10", { stock: "9" }, true],
      // a numeric term never holds for a field that is not a number
      ["stock:>0", { stock: "n/a" }, false],
      ["stock:<0", { stock: "" }, false],
      ["stock:>0", {}, false],
      // text orders text
      ["sku:>m", { sku: "N100" }, true],
      ["sku:<m", { sku: "A100" }, true],
      ["sku:>=abc", { sku: "ABC" }, true],
      ["sku:<=abc", { sku: "abd" }, false],
      ["sku:>abc", { sku: "ABC" }, false],
      ["sku:<abc", { sku: " abc " }, false],
      ["sku:<=abc", { sku: "ABC" }, true],
    ]);
  });

  describe("f:v contains", () => {
    table([
      ["title:camera", { title: "Digital Camera Kit" }, true],
      ["title:camera", { title: "Lens" }, false],
      ["title:CAM", { title: "webcam" }, true],
      ["title:camera", {}, false],
      ["price:12", { price: 112.5 }, true],
    ]);
  });

  describe("f:-v does not contain", () => {
    table([
      ["description:-discontinued", { description: "This item is DISCONTINUED" }, false],
      ["description:-discontinued", { description: "in stock" }, true],
      ["description:-discontinued", {}, true],
      ['title:-"Refurbished"', { title: "refurbished phone" }, false],
    ]);
  });

  describe("f:v% f:%v f:a%b patterns (anchored, not substrings)", () => {
    table([
      ["sku:ABC%", { sku: "abc-123" }, true],
      ["sku:ABC%", { sku: "x-abc-123" }, false],
      ["sku:%123", { sku: "abc-123" }, true],
      ["sku:%123", { sku: "abc-1234" }, false],
      ["sku:a%3", { sku: "abc-123" }, true],
      ["sku:a%3", { sku: "abc-1234" }, false],
      ["sku:a%c%3", { sku: "abc-123" }, true],
      ["sku:a%x%3", { sku: "abc-123" }, false],
      // pieces may not overlap: "ab%ba" needs at least "abba"
      ["sku:ab%ba", { sku: "aba" }, false],
      ["sku:ab%ba", { sku: "abba" }, true],
      ["sku:%", { sku: "" }, true],
      ["sku:%b%", { sku: "abc" }, true],
      ["sku:=AB%", { sku: "abc" }, true],
      ["sku:-AB%", { sku: "abc" }, false],
      ["sku:-AB%", { sku: "cab" }, true],
      ["sku:!=AB%", { sku: "abc" }, false],
      ['title:"100\\%"', { title: "100% cotton" }, true],
      ['title:"100\\%"', { title: "1000 cotton" }, false],
      ['title:"% cotton"', { title: "100% Cotton" }, true],
      // in an ordering `%` is an ordinary character
      ["rate:>50%", { rate: "60%" }, true],
    ]);
  });

  describe("f:= empty or missing, f:-= f:!= not empty", () => {
    table([
      ["upc:=", { upc: "" }, true],
      ["upc:=", { upc: "   " }, true],
      ["upc:=", { upc: null }, true],
      ["upc:=", {}, true],
      ["upc:=", { upc: [] }, true],
      ["upc:=", { upc: "0" }, false],
      ["upc:=", { upc: 0 }, false],
      ['upc:=""', { upc: "" }, true],
      ["upc:-=", { upc: "123" }, true],
      ["upc:-=", { upc: "" }, false],
      ["upc:-=", {}, false],
      ["upc:!=", { upc: 0 }, true],
      ["upc:!=", { upc: null }, false],
    ]);
  });

  describe("bare v: some field contains v (keyword)", () => {
    table([
      ["nike", { brand: "Nike", title: "Shoe" }, true],
      ["adidas", { brand: "Nike", title: "Shoe" }, false],
      ["paris", { billing: { city: "Paris" } }, true],
      ["b2", { items: [{ sku: "A1" }, { sku: "B2" }] }, true],
      ["42", { qty: 142 }, true],
      ['"running shoe"', { title: "Trail Running Shoe" }, true],
      ['"running shoe"', { title: "running trail shoe" }, false],
      ["nik%", { brand: "Nike" }, true],
      ["nik%", { brand: "a nike" }, false],
      ["brand", { brand: "Nike" }, false],
      ["x", {}, false],
    ]);
  });
});

describe("quoting and escapes", () => {
  table([
    ['vendorstock:="Out of Stock"', { vendorstock: "out of stock" }, true],
    ['vendorstock:="Out of Stock"', { vendorstock: "Out" }, false],
    ['title:="5\\" pipe"', { title: '5" pipe' }, true],
    ['title:="back\\\\slash"', { title: "back\\slash" }, true],
    ['title:="a\\b"', { title: "a\\b" }, true],
    ['title:="Shirt (XL)"', { title: "shirt (xl)" }, true],
    ['title:"(XL)"', { title: "Shirt (XL)" }, true],
    ['"my field":=x', { "my field": "X" }, true],
    ["path:C:\\temp", { path: "c:\\temp\\a" }, true],
    ["url:=http://x.test/a?b=c", { url: "HTTP://x.test/a?b=c" }, true],
    ['size:=" 10 "', { size: "10" }, true],
  ]);
});

describe("text comparisons ignore case and trim spaces", () => {
  table([
    ["condition:=new", { condition: "  NEW " }, true],
    ["condition:=NEW", { condition: "new" }, true],
    ['condition:="  New  "', { condition: "new" }, true],
    ["title:SHIRT", { title: "t-shirt" }, true],
    ["name:=ÉLAN", { name: "élan" }, true],
  ]);
});

describe("numbers vs text", () => {
  table([
    ["price:=12.50", { price: "12.5" }, true],
    ["price:=12", { price: 12 }, true],
    ["price:=-3.5", { price: "-3.50" }, true],
    ["price:=0.5", { price: ".5" }, false],
    // 1e3 is not a number here
    ["qty:=1e3", { qty: "1000" }, false],
    ["qty:=1e3", { qty: "1E3" }, true],
    ["qty:>1e3", { qty: "999" }, true],
    // identifiers that look like numbers stay text
    ["sku:=713752E1", { sku: "713752e1" }, true],
    ["sku:=713752E1", { sku: "7137520" }, false],
    ["sku:=7137520", { sku: "713752E1" }, false],
    // a leading zero marks a code: 0700 is not 700
    ["zip:=0700", { zip: "700" }, false],
    ["zip:=0700", { zip: 700 }, false],
    ["zip:=700", { zip: "0700" }, false],
    ["zip:=0700", { zip: "0700" }, true],
    ["zip:>500", { zip: "0700" }, false],
    ["code:=00", { code: "0" }, false],
    ["price:=0", { price: "0.00" }, true],
    ["price:>1", { price: "1,000" }, false],
  ]);
});

describe("booleans", () => {
  table([
    ["archived:=0", { archived: false }, true],
    ["archived:=0", { archived: 0 }, true],
    ["archived:=0", { archived: "0" }, true],
    ["archived:=0", { archived: "" }, true],
    ["archived:=0", {}, true],
    ["archived:=0", { archived: "false" }, true],
    ["archived:=0", { archived: true }, false],
    ["archived:=0", { archived: "1" }, false],
    ["archived:=1", { archived: true }, true],
    ["archived:=1", { archived: 1 }, true],
    ["archived:=1", { archived: "1" }, true],
    ["archived:=1", { archived: "TRUE" }, true],
    ["archived:=1", { archived: false }, false],
    ["archived:=1", {}, false],
    ["archived:=1", { archived: "" }, false],
    ["archived:-=1", { archived: false }, true],
    ["archived:!=0", { archived: true }, true],
    ["archived:!=0", {}, false],
    ["archived:=true", { archived: 1 }, true],
    ["archived:=false", { archived: false }, true],
  ]);
});
