import { ConveyorError } from "../errors.js";
import { RowFailure, type MappedRecord } from "./types.js";
import type { NameResolver, ValueReader } from "./template.js";

/**
 * The `calculate` expression language: numbers, field names, `+ - * / ( )`,
 * unary minus, and `round(x[, n])`, `ceil(x[, n])`, `floor(x[, n])`,
 * `min(a, b, …)`, `max(a, b, …)`. Parsed once into closures; never `eval`.
 *
 * A field value is a number when it reads `12`, `-3.5`, `.5` (spaces around
 * are ignored). `1e3`, `1,5`, `$10` and empty values are row errors naming the
 * field and the value: a price computed from a blank cost must not become 0.
 */
export type Evaluator<Row> = (record: MappedRecord, row: Row | undefined) => number;

export interface CompiledExpression<Row> {
  readonly source: string;
  readonly names: readonly string[];
  evaluate: Evaluator<Row>;
}

const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const FUNCTIONS = ["round", "ceil", "floor", "min", "max"] as const;
type FunctionName = (typeof FUNCTIONS)[number];

type Token =
  | { kind: "num"; value: number; pos: number }
  | { kind: "name"; value: string; pos: number }
  | { kind: "op"; value: string; pos: number }
  | { kind: "end"; pos: number };

function isNameStart(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
}

function isNamePart(c: string): boolean {
  return isNameStart(c) || (c >= "0" && c <= "9") || c === ".";
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

/** Parses a field's text as a number; anything else is the record's fault, not the definition's. */
export function readNumber(text: string | undefined, field: string): number {
  const trimmed = text?.trim() ?? "";
  if (!NUMBER_TEXT.test(trimmed)) {
    const shown = text === undefined ? "missing" : text.trim() === "" ? "empty" : `${JSON.stringify(text)}, not a number`;
    throw new RowFailure(`field "${field}" is ${shown}`, field);
  }
  return Number(trimmed);
}

/** Rounds half away from zero at `digits` decimals, without the 1.005 → 1.00 binary trap. */
export function roundTo(value: number, digits: number, mode: "round" | "ceil" | "floor" = "round"): number {
  const fn = mode === "ceil" ? Math.ceil : mode === "floor" ? Math.floor : (x: number) => Math.sign(x) * Math.round(Math.abs(x));
  if (digits === 0) return fn(value);
  const text = String(value);
  if (text.includes("e")) {
    // Past 1e21 a double has no decimals left to round; scaling would only add error.
    if (digits > 0 && Math.abs(value) >= 1) return value;
    const factor = 10 ** digits;
    return fn(value * factor) / factor;
  }
  // Shifting the decimal point in text keeps 1.005 as 100.5 (× 100 gives 100.49999…).
  const shifted = fn(Number(`${text}e${digits}`));
  const back = String(shifted);
  return back.includes("e") ? shifted / 10 ** digits : Number(`${back}e${-digits}`);
}

/** Formats a result without float noise (`0.1 + 0.2` → `0.3`) and without trailing zeros (`15.50` → `15.5`). */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RowFailure("the result is not a finite number");
  const clean = Number(value.toPrecision(15));
  return Object.is(clean, -0) ? "0" : String(clean);
}

function tokenize(text: string, where: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
    } else if (isDigit(c) || (c === "." && isDigit(text.charAt(i + 1)))) {
      const start = i;
      while (i < text.length && isDigit(text.charAt(i))) i++;
      if (text.charAt(i) === ".") {
        i++;
        while (i < text.length && isDigit(text.charAt(i))) i++;
      }
      tokens.push({ kind: "num", value: Number(text.slice(start, i)), pos: start });
    } else if (isNameStart(c)) {
      const start = i;
      while (i < text.length && isNamePart(text.charAt(i))) i++;
      tokens.push({ kind: "name", value: text.slice(start, i), pos: start });
    } else if ("+-*/(),".includes(c)) {
      tokens.push({ kind: "op", value: c, pos: i });
      i++;
    } else {
      throw syntaxError(where, text, i, `unexpected character ${JSON.stringify(c)}`);
    }
  }
  tokens.push({ kind: "end", pos: text.length });
  return tokens;
}

function syntaxError(where: string, text: string, pos: number, what: string): ConveyorError {
  return new ConveyorError("definition_invalid", `${where}: ${what} at position ${pos + 1} of ${JSON.stringify(text)}\n  ${text}\n  ${" ".repeat(pos)}^`, {
    details: { field: where, position: pos + 1 },
    hint: `An expression uses numbers, field names, + - * / ( ) and ${FUNCTIONS.map((f) => `${f}()`).join(", ")}, e.g. "round(cost * 1.35 + 2, 2)".`,
  });
}

type Node<Row> = Evaluator<Row>;

/** Recursive descent over the token list; each rule returns a closure, so evaluation walks no tree of objects. */
class Parser<Row> {
  private at = 0;
  readonly names: string[] = [];

  constructor(
    private readonly tokens: Token[],
    private readonly text: string,
    private readonly where: string,
    private readonly resolve: NameResolver<Row>,
  ) {}

  parse(): Node<Row> {
    const node = this.sum();
    const next = this.peek();
    if (next.kind !== "end") throw this.fail(next, "expected an operator");
    return node;
  }

  private peek(): Token {
    return this.tokens[this.at] ?? { kind: "end", pos: this.text.length };
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return t.kind === "op" && t.value === value;
  }

  private fail(token: Token, expected: string): ConveyorError {
    const found = token.kind === "end" ? "end of expression" : JSON.stringify(token.kind === "num" ? String(token.value) : token.value);
    return syntaxError(this.where, this.text, token.pos, `${expected}, found ${found}`);
  }

  private sum(): Node<Row> {
    return this.level(() => this.product(), {
      "+": (a, b) => (r, s) => a(r, s) + b(r, s),
      "-": (a, b) => (r, s) => a(r, s) - b(r, s),
    });
  }

  private product(): Node<Row> {
    return this.level(() => this.unary(), {
      "*": (a, b) => (r, s) => a(r, s) * b(r, s),
      "/": (a, b) => (r, s) => {
        const divisor = b(r, s);
        if (divisor === 0) throw new RowFailure("division by zero");
        return a(r, s) / divisor;
      },
    });
  }

  /** One precedence level of left-associative operators: `operand` parses what they join, `ops` builds each one's closure. */
  private level(operand: () => Node<Row>, ops: Record<string, (a: Node<Row>, b: Node<Row>) => Node<Row>>): Node<Row> {
    let left = operand();
    for (let t = this.peek(); t.kind === "op" && Object.hasOwn(ops, t.value); t = this.peek()) {
      const combine = ops[t.value];
      if (!combine) break;
      this.at++;
      left = combine(left, operand());
    }
    return left;
  }

  private unary(): Node<Row> {
    if (this.isOp("-")) {
      this.at++;
      const inner = this.unary();
      return (r, s) => -inner(r, s);
    }
    if (this.isOp("+")) {
      this.at++;
      return this.unary();
    }
    return this.primary();
  }

  private primary(): Node<Row> {
    const token = this.peek();
    if (token.kind === "num") {
      this.at++;
      const value = token.value;
      return () => value;
    }
    if (token.kind === "op" && token.value === "(") {
      this.at++;
      const inner = this.sum();
      if (!this.isOp(")")) throw this.fail(this.peek(), 'expected ")"');
      this.at++;
      return inner;
    }
    if (token.kind === "name") {
      this.at++;
      if (this.isOp("(")) return this.call(token.value, token.pos);
      return this.field(token.value, token.pos);
    }
    throw this.fail(token, "expected a number, a field or (");
  }

  private field(name: string, pos: number): Node<Row> {
    const reader: ValueReader<Row> | null = this.resolve(name);
    if (reader === null) throw syntaxError(this.where, this.text, pos, `"${name}" is no mapped field and no column of the file`);
    this.names.push(name);
    return (r, s) => readNumber(reader(r, s), name);
  }

  private call(name: string, pos: number): Node<Row> {
    if (!(FUNCTIONS as readonly string[]).includes(name)) {
      throw syntaxError(this.where, this.text, pos, `unknown function "${name}" (known: ${FUNCTIONS.join(", ")})`);
    }
    this.at++;
    const args: Node<Row>[] = [];
    if (!this.isOp(")")) {
      args.push(this.sum());
      while (this.isOp(",")) {
        this.at++;
        args.push(this.sum());
      }
    }
    if (!this.isOp(")")) throw this.fail(this.peek(), 'expected "," or ")"');
    this.at++;
    return buildCall(name as FunctionName, args, (what) => syntaxError(this.where, this.text, pos, what));
  }
}

function buildCall<Row>(name: FunctionName, args: Node<Row>[], fail: (what: string) => ConveyorError): Node<Row> {
  const [x, n] = args;
  if (name === "min" || name === "max") {
    const pick = name === "min" ? Math.min : Math.max;
    const rest = args.slice(1);
    if (x === undefined) throw fail(`${name}() needs at least one argument`);
    return (r, s) => {
      let out = x(r, s);
      for (const arg of rest) out = pick(out, arg(r, s));
      return out;
    };
  }
  if (x === undefined || args.length > 2) throw fail(`${name}() takes a value and optionally a number of decimals`);
  if (n === undefined) return (r, s) => roundTo(x(r, s), 0, name);
  return (r, s) => {
    const digits = n(r, s);
    if (!Number.isInteger(digits) || Math.abs(digits) > 15) throw new RowFailure(`${name}(): decimals must be a whole number from -15 to 15, not ${digits}`);
    return roundTo(x(r, s), digits, name);
  };
}

/**
 * Compiles one `calculate` expression. `where` names the definition key
 * (`vendor_actions[2].calculate.price`). Syntax errors are definition errors
 * with the position; evaluation errors are `RowFailure`s.
 */
export function compileExpression<Row>(text: string, resolve: NameResolver<Row>, where: string): CompiledExpression<Row> {
  const parser = new Parser<Row>(tokenize(text, where), text, where, resolve);
  const evaluate = parser.parse();
  return { source: text, names: parser.names, evaluate };
}
