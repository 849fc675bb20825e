import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { compileSearch, MAX_DEPTH, parseSearch } from "../../src/search/index.js";

function syntaxErrorOf(expression: string): ConveyorError {
  try {
    parseSearch(expression);
  } catch (err) {
    if (err instanceof ConveyorError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to be refused`);
}

/** [expression, start of the message, 1-based position of the faulty character] */
const CASES: [string, string, number][] = [
  ["stock:>0 (brand:=Nike brand:=Adidas", 'unbalanced "("', 10],
  ["(a (b c)", 'unbalanced "("', 1],
  ["((a)", 'unbalanced "("', 1],
  ["a (b (c", 'unbalanced "("', 6],
  ["brand:=Nike)", 'unbalanced ")"', 12],
  ["(a b)) c", 'unbalanced ")"', 6],
  [")", 'unbalanced ")"', 1],
  ['vendorstock:="Out of Stock', "unbalanced quote", 14],
  ['"running shoe', "unbalanced quote", 1],
  ['title:="5\\" pipe', "unbalanced quote", 8],
  ['a:=x "b', "unbalanced quote", 6],
  ['title:="a"b', "unexpected character after the closing quote", 11],
  ['"ab"cd', "unexpected character after the closing quote", 5],
  ['size:5"', "unexpected quote", 7],
  ['ab"c"', "unexpected quote", 3],
  [":=x", "missing field name", 1],
  ["a :x", "missing field name", 3],
  ["title:", 'missing value after "title:"', 7],
  ["title:-", 'missing value after "title:-"', 8],
  ["price:> stock:=1", 'missing value after "price:>"', 8],
  ["price:>=", 'missing value after "price:>="', 9],
  ['title:" "', 'missing value after "title:"', 7],
  ['""', "empty keyword", 1],
  ["a ()", "empty parentheses", 3],
  ["(a ( ) b)", "empty parentheses", 4],
  ["constructor:x", 'the field "constructor" is refused', 1],
  ["stock:>0 billing.__proto__:=y", 'the field "billing.__proto__" is refused', 10],
  ["(a prototype.name:Object)", 'the field "prototype.name" is refused', 4],
];

describe("parse errors point at the character", () => {
  it.each(CASES)("%j → %s at %i", (expression, problem, position) => {
    const err = syntaxErrorOf(expression);
    expect(err.code).toBe("search_syntax");
    expect(err.retryable).toBe(false);
    expect(err.message.startsWith(problem)).toBe(true);
    expect(err.message).toContain(` at position ${position}\n`);
    expect(err.details).toEqual({ position, expression });
    expect(err.hint).toBeTruthy();
    // The caret line sits under the faulty character of the echoed expression.
    const [, shown, caret] = err.message.split("\n");
    expect(shown).toBe(`  ${expression}`);
    expect(caret).toBe(`  ${" ".repeat(position - 1)}^`);
  });

  it("matches the message shape other parts show to users", () => {
    const err = syntaxErrorOf("stock:>0 (brand:=Nike");
    expect(err.message).toBe('unbalanced "(" at position 10\n  stock:>0 (brand:=Nike\n           ^');
    expect(err.describe()).toContain("close the group");
    expect(err.toJSON()).toMatchObject({ code: "search_syntax", details: { position: 10 } });
  });

  it("keeps the caret right in a long expression by showing a window around it", () => {
    const expression = `${"a:=1 ".repeat(40)}(b:=2 ${"c:=3 ".repeat(40)}`;
    const err = syntaxErrorOf(expression);
    const index = expression.indexOf("(");
    expect(err.details.position).toBe(index + 1);
    const [, shown = "", caret = ""] = err.message.split("\n");
    expect(shown.startsWith("  …")).toBe(true);
    expect(shown.endsWith("…")).toBe(true);
    expect(shown.charAt(caret.indexOf("^"))).toBe("(");
  });

  it("flattens line breaks so the caret lines up", () => {
    const err = syntaxErrorOf("a:=1\n(b:=2");
    expect(err.message.split("\n").slice(1)).toEqual(["  a:=1 (b:=2", "       ^"]);
  });

  it("refuses nesting deeper than the limit and accepts it at the limit", () => {
    expect(() => parseSearch(`${"(".repeat(MAX_DEPTH)}a${")".repeat(MAX_DEPTH)}`)).not.toThrow();
    const deep = `${"(".repeat(MAX_DEPTH + 1)}a${")".repeat(MAX_DEPTH + 1)}`;
    expect(syntaxErrorOf(deep).message).toContain("nested deeper");
  });

  it("throws from compileSearch before any record is read", () => {
    expect(() => compileSearch("(a")).toThrow(ConveyorError);
  });

  it.each([
    "f:=",
    "f:-=",
    "f:!=",
    'f:=""',
    "a:b:c",
    "f:==x",
    "f:%",
    "-word",
    "12:30",
    'f:"(x)"',
    '"my field":="a b"',
  ])("accepts %j", (expression) => {
    expect(() => parseSearch(expression)).not.toThrow();
  });
});
