/**
 * Syntax check of a `calculate` expression (automations.md, action rules):
 * numbers, field names, `+ - * / ( )`, and `round(x, n)`, `ceil`, `floor`,
 * `min`, `max`. Only the shape is checked here, so `check` refuses
 * `"round(cost * 1.35"` before a run; the mapper evaluates it per record.
 */

const FUNCTIONS: Record<string, [number, number]> = {
  round: [1, 2],
  ceil: [1, 1],
  floor: [1, 1],
  min: [1, Infinity],
  max: [1, Infinity],
};

export const CALCULATE_ALLOWED = "numbers, field names, + - * / ( ), round(x, n), ceil(x), floor(x), min(a, b, …), max(a, b, …)";

interface Token {
  kind: "num" | "name" | "op" | "(" | ")" | ",";
  text: string;
  pos: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const re = /(\d+(?:\.\d+)?|\.\d+)|([A-Za-z_][A-Za-z0-9_.]*)|([-+*/])|([(),])/y;
  let pos = 0;
  while (pos < text.length) {
    if (/\s/.test(text.charAt(pos))) {
      pos++;
      continue;
    }
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) throw new SyntaxError(`unexpected "${text.charAt(pos)}" at position ${pos + 1}`);
    if (m[1] !== undefined) tokens.push({ kind: "num", text: m[1], pos });
    else if (m[2] !== undefined) tokens.push({ kind: "name", text: m[2], pos });
    else if (m[3] !== undefined) tokens.push({ kind: "op", text: m[3], pos });
    else tokens.push({ kind: (m[4] ?? "(") as "(" | ")" | ",", text: m[4] ?? "", pos });
    pos = re.lastIndex;
  }
  return tokens;
}

class Checker {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private fail(what: string): never {
    const t = this.peek();
    throw new SyntaxError(t ? `${what}, found "${t.text}" at position ${t.pos + 1}` : `${what}, found the end of the expression`);
  }

  run(): void {
    this.expr();
    if (this.peek()) this.fail("expected an operator");
  }

  private expr(): void {
    this.term();
    while (this.peek()?.kind === "op" && (this.peek()?.text === "+" || this.peek()?.text === "-")) {
      this.i++;
      this.term();
    }
  }

  private term(): void {
    this.unary();
    while (this.peek()?.kind === "op" && (this.peek()?.text === "*" || this.peek()?.text === "/")) {
      this.i++;
      this.unary();
    }
  }

  private unary(): void {
    const t = this.peek();
    if (t?.kind === "op" && (t.text === "-" || t.text === "+")) {
      this.i++;
      this.unary();
      return;
    }
    this.primary();
  }

  private primary(): void {
    const t = this.peek();
    if (!t) this.fail("expected a number, a field or (");
    if (t.kind === "num") {
      this.i++;
      return;
    }
    if (t.kind === "(") {
      this.i++;
      this.expr();
      if (this.peek()?.kind !== ")") this.fail("expected )");
      this.i++;
      return;
    }
    if (t.kind !== "name") this.fail("expected a number, a field or (");
    this.i++;
    if (this.peek()?.kind !== "(") return;
    const arity = FUNCTIONS[t.text];
    if (!arity) throw new SyntaxError(`unknown function "${t.text}" at position ${t.pos + 1}`);
    this.i++;
    let args = 0;
    if (this.peek()?.kind !== ")") {
      this.expr();
      args++;
      while (this.peek()?.kind === ",") {
        this.i++;
        this.expr();
        args++;
      }
    }
    if (this.peek()?.kind !== ")") this.fail("expected , or )");
    this.i++;
    const [min, max] = arity;
    if (args < min || args > max) {
      throw new SyntaxError(`${t.text}() takes ${min === max ? min : max === Infinity ? `at least ${min}` : `${min} or ${max}`} argument(s), got ${args}`);
    }
  }
}

/** Null when the expression is well formed; otherwise what is wrong and where. */
export function checkCalculate(expression: string): string | null {
  try {
    const tokens = tokenize(expression);
    if (tokens.length === 0) return "the expression is empty";
    new Checker(tokens).run();
    return null;
  } catch (err) {
    if (err instanceof SyntaxError) return err.message;
    throw err;
  }
}
