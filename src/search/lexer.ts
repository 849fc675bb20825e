import { ConveyorError } from "../errors.js";

/**
 * Splits an expression into parentheses and terms. A term is `field:<op>value`
 * or a bare keyword; values and field names may be double-quoted. Inside quotes
 * `\"` is a quote, `\\` a backslash and `\%` a literal percent sign; outside
 * quotes a backslash is an ordinary character.
 */

/** How much of a long expression is shown on each side of the faulty character. */
const WINDOW = 60;

/**
 * The expression on one line with a caret under the character at `index`, cut to
 * a window around it so a long expression still points at the right place.
 */
export function caretLines(expression: string, index: number): string {
  const flat = expression.replace(/[\r\n\t]/g, " ");
  const start = Math.max(0, index - WINDOW);
  const end = Math.min(flat.length, index + WINDOW);
  let shown = flat.slice(start, end);
  let caretAt = index - start;
  if (start > 0) {
    shown = `…${shown}`;
    caretAt += 1;
  }
  if (end < flat.length) shown = `${shown}…`;
  return `  ${shown}\n  ${" ".repeat(caretAt)}^`;
}

/**
 * A `search_syntax` error. `index` is 0-based in the code; people and
 * `details.position` see the 1-based column, as editors count.
 */
export function searchSyntaxError(expression: string, index: number, problem: string, hint: string): ConveyorError {
  const position = index + 1;
  return new ConveyorError("search_syntax", `${problem} at position ${position}\n${caretLines(expression, index)}`, {
    details: { position, expression },
    hint,
  });
}

export interface TermToken {
  kind: "term";
  /** 0-based index of the term's first character. */
  pos: number;
  /** null for a keyword (no field). */
  field: string | null;
  /** The operator as written: `=`, `-=`, `!=`, `>`, `>=`, `<`, `<=`, `-` or `` (contains). */
  op: string;
  /** Index just after the operator, where the value starts. */
  valuePos: number;
  /** The value split at unescaped `%`; a single piece when it is not a pattern. */
  chunks: string[];
  quoted: boolean;
}

export type Token = { kind: "open"; pos: number } | { kind: "close"; pos: number } | TermToken;

/** Longest first, so `>=` is not read as `>` followed by a value `=…`. */
const OPERATORS = [">=", "<=", "-=", "!=", "=", ">", "<", "-"];

const QUOTE_HINT = 'close the quoted value with \'"\'; inside quotes write \\" for a quote, e.g. title:="5\\" pipe"';

function isSpace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v" || c === "\u00a0";
}

/** `c` is "" past the end of the text. */
function endsWord(c: string): boolean {
  return c === "" || c === "(" || c === ")" || isSpace(c);
}

class Lexer {
  private i = 0;
  readonly tokens: Token[] = [];

  constructor(private readonly text: string) {}

  run(): Token[] {
    const { text } = this;
    while (this.i < text.length) {
      const c = text.charAt(this.i);
      if (isSpace(c)) this.i += 1;
      else if (c === "(" || c === ")") {
        this.tokens.push({ kind: c === "(" ? "open" : "close", pos: this.i });
        this.i += 1;
      } else this.tokens.push(this.term());
    }
    return this.tokens;
  }

  private term(): TermToken {
    const start = this.i;
    if (this.text.charAt(start) === '"') {
      const { chunks, end } = this.quoted(start);
      this.i = end;
      if (this.text.charAt(end) === ":") return this.afterField(start, chunks.join("%"), end);
      this.expectWordEnd(end);
      return { kind: "term", pos: start, field: null, op: "", valuePos: start, chunks, quoted: true };
    }
    let j = start;
    while (!endsWord(this.text.charAt(j)) && this.text.charAt(j) !== ":" && this.text.charAt(j) !== '"') j += 1;
    const stop = this.text.charAt(j);
    if (stop === '"') throw this.strayQuote(j);
    if (stop === ":") return this.afterField(start, this.text.slice(start, j), j);
    this.i = j;
    return { kind: "term", pos: start, field: null, op: "", valuePos: start, chunks: this.text.slice(start, j).split("%"), quoted: false };
  }

  /** `colon` is the index of the `:` that ends the field name. */
  private afterField(start: number, field: string, colon: number): TermToken {
    if (field.trim() === "") {
      throw searchSyntaxError(this.text, start, "missing field name before ':'", "write field:value, e.g. brand:=Nike; quote a keyword that holds ':'");
    }
    let j = colon + 1;
    const op = OPERATORS.find((o) => this.text.startsWith(o, j)) ?? "";
    j += op.length;
    const valuePos = j;
    if (this.text.charAt(j) === '"') {
      const { chunks, end } = this.quoted(j);
      this.expectWordEnd(end);
      this.i = end;
      return { kind: "term", pos: start, field: field.trim(), op, valuePos, chunks, quoted: true };
    }
    while (!endsWord(this.text.charAt(j))) {
      if (this.text.charAt(j) === '"') throw this.strayQuote(j);
      j += 1;
    }
    this.i = j;
    return { kind: "term", pos: start, field: field.trim(), op, valuePos, chunks: this.text.slice(valuePos, j).split("%"), quoted: false };
  }

  /** Reads `"…"` starting at the opening quote; returns the pieces and the index after the closing quote. */
  private quoted(open: number): { chunks: string[]; end: number } {
    const { text } = this;
    const chunks: string[] = [];
    let current = "";
    let j = open + 1;
    while (j < text.length) {
      const c = text.charAt(j);
      if (c === '"') {
        chunks.push(current);
        return { chunks, end: j + 1 };
      }
      const next = text.charAt(j + 1);
      if (c === "\\" && (next === '"' || next === "\\" || next === "%")) {
        current += next;
        j += 2;
      } else if (c === "%") {
        chunks.push(current);
        current = "";
        j += 1;
      } else {
        current += c;
        j += 1;
      }
    }
    throw searchSyntaxError(text, open, "unbalanced quote '\"'", QUOTE_HINT);
  }

  private expectWordEnd(at: number): void {
    if (!endsWord(this.text.charAt(at))) {
      throw searchSyntaxError(
        this.text,
        at,
        "unexpected character after the closing quote",
        "put a space between terms; a quoted value ends at its closing '\"'",
      );
    }
  }

  private strayQuote(at: number) {
    return searchSyntaxError(this.text, at, "unexpected quote '\"' inside a value", `quote the whole value instead; ${QUOTE_HINT}`);
  }
}

export function tokenize(text: string): Token[] {
  return new Lexer(text).run();
}
