import { describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { RowFailure, compileExpression, formatNumber, newRecord, roundTo, type MappedRecord } from "../../src/mapping/index.js";
import type { NameResolver } from "../../src/mapping/template.js";

const fields = new Set(["cost", "price", "qty", "weight", "msrp", "billing.total", "blank", "text", "zero"]);
const resolve: NameResolver<undefined> = (name) => (fields.has(name) ? (r) => r[name] : null);

function record(values: Record<string, string>): MappedRecord {
  return Object.assign(newRecord(), values);
}

const base = { cost: "10", price: " 19.99 ", qty: "3", weight: "-2.5", msrp: ".5", "billing.total": "100", blank: "", text: "abc", zero: "0" };

function calc(expression: string, values: Record<string, string> = base): string {
  return formatNumber(compileExpression(expression, resolve, "calculate.x").evaluate(record(values), undefined));
}

describe("calculate grammar", () => {
  it.each([
    ["round(cost * 1.35 + 2, 2)", "15.5"],
    ["cost + qty * 2", "16"],
    ["(cost + qty) * 2", "26"],
    ["cost - qty - 2", "5"],
    ["cost / 4 / 2", "1.25"],
    ["-cost", "-10"],
    ["--cost", "10"],
    ["-(cost + 2) * -1", "12"],
    ["+qty", "3"],
    ["2 * -qty", "-6"],
    ["price", "19.99"],
    ["msrp * 2", "1"],
    ["weight", "-2.5"],
    ["billing.total / 8", "12.5"],
    ["0.1 + 0.2", "0.3"],
    ["cost * 1.1", "11"],
    [".5 + 1.", "1.5"],
    ["round(2.5)", "3"],
    ["round(-2.5)", "-3"],
    ["round(1.005, 2)", "1.01"],
    ["round(1234.5, -2)", "1200"],
    ["ceil(price)", "20"],
    ["floor(price)", "19"],
    ["ceil(1.231, 2)", "1.24"],
    ["floor(-1.231, 1)", "-1.3"],
    ["min(cost, qty, 7)", "3"],
    ["max(cost, qty, 7)", "10"],
    ["min(cost)", "10"],
    ["max(cost * 2, round(price, 0)) + 1", "21"],
    ["round(-0.001, 2)", "0"],
    ["1 / 3", "0.333333333333333"],
  ])("%s = %s", (expression, expected) => {
    expect(calc(expression)).toBe(expected);
  });

  it("records the field names it reads", () => {
    expect(compileExpression("round(cost * qty, 2) + cost", resolve, "x").names).toEqual(["cost", "qty", "cost"]);
  });
});

describe("calculate syntax errors (definition time, with the position)", () => {
  it.each([
    ["round(cost * 1.35", 18, 'expected "," or ")", found end of expression'],
    ["cost * ", 8, "expected a number, a field or (, found end of expression"],
    ["cost ** 2", 7, 'expected a number, a field or (, found "*"'],
    ["cost 2", 6, 'expected an operator, found "2"'],
    ["cost $ 2", 6, 'unexpected character "$"'],
    ["sqrt(cost)", 1, 'unknown function "sqrt" (known: round, ceil, floor, min, max)'],
    ["nothing + 1", 1, '"nothing" is no mapped field and no column of the file'],
    ["round(cost, 2, 3)", 1, "round() takes a value and optionally a number of decimals"],
    ["min()", 1, "min() needs at least one argument"],
    ["(cost", 6, 'expected ")", found end of expression'],
    ["", 1, "expected a number, a field or (, found end of expression"],
  ])("%j fails at position %d", (expression, position, what) => {
    let err: unknown;
    try {
      compileExpression(expression, resolve, "vendor_actions[0].calculate.price");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConveyorError);
    const e = err as ConveyorError;
    expect(e.code).toBe("definition_invalid");
    expect(e.message).toContain(`vendor_actions[0].calculate.price: ${what} at position ${position}`);
    expect(e.details.position).toBe(position);
    expect(e.message.split("\n")[2]).toBe(`  ${" ".repeat(position - 1)}^`);
  });
});

describe("calculate row errors", () => {
  it.each([
    ["cost * 2", { cost: "" }, 'field "cost" is empty', "cost"],
    ["cost * 2", { cost: "   " }, 'field "cost" is empty', "cost"],
    ["cost * 2", {}, 'field "cost" is missing', "cost"],
    ["text + 1", { text: "abc" }, 'field "text" is "abc", not a number', "text"],
    ["cost + 1", { cost: "1e3" }, 'field "cost" is "1e3", not a number', "cost"],
    ["cost + 1", { cost: "1,5" }, 'field "cost" is "1,5", not a number', "cost"],
    ["cost + 1", { cost: "0x10" }, 'field "cost" is "0x10", not a number', "cost"],
    ["cost / zero", { cost: "1", zero: "0" }, "division by zero", undefined],
    ["cost / (qty - 3)", { cost: "1", qty: "3" }, "division by zero", undefined],
    ["round(cost, qty)", { cost: "1", qty: "0.5" }, "round(): decimals must be a whole number from -15 to 15, not 0.5", undefined],
  ])("%s with %j: %s", (expression, values, message, field) => {
    let err: unknown;
    try {
      calc(expression, values);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RowFailure);
    expect((err as RowFailure).message).toBe(message);
    expect((err as RowFailure).field).toBe(field);
  });

  it("a non-finite result is a row error", () => {
    expect(() => formatNumber(Infinity)).toThrow(RowFailure);
  });
});

describe("number helpers", () => {
  it.each([
    [1.005, 2, "round", 1.01],
    [2.675, 2, "round", 2.68],
    [-1.005, 2, "round", -1.01],
    [1.001, 2, "ceil", 1.01],
    [1.009, 2, "floor", 1],
    [1e21, 2, "round", 1e21],
    [15.5, 0, "round", 16],
  ] as const)("roundTo(%d, %d, %s) = %d", (value, digits, mode, expected) => {
    expect(roundTo(value, digits, mode)).toBe(expected);
  });

  it.each([
    [15.5, "15.5"],
    [0.30000000000000004, "0.3"],
    [-0, "0"],
    [100, "100"],
    [1e-7, "1e-7"],
  ])("formatNumber(%d) = %s", (value, expected) => {
    expect(formatNumber(value)).toBe(expected);
  });
});
