import { isPrototypeKey, PROTOTYPE_KEYS_RULE } from "../json-limits.js";
import { searchSyntaxError, tokenize, type TermToken } from "./lexer.js";
import type { SearchNode, SearchOperator } from "./types.js";
import { buildValue } from "./values.js";

/*
 * Grouping: terms at the top level must all hold (AND); the members of a
 * parenthesised group are alternatives (OR). A group nested inside an OR group
 * is an AND of its members, and so on, alternating. Without that alternation
 * nesting would add nothing (an OR inside an OR is the same OR), and with it
 * `(brand:=Nike (brand:=Acme stock:>0))` says "Nike, or Acme in stock".
 */

const OPERATOR_NAMES: Record<string, SearchOperator> = {
  "=": "eq",
  "-=": "ne",
  "!=": "ne",
  ">": "gt",
  ">=": "ge",
  "<": "lt",
  "<=": "le",
  "": "contains",
  "-": "not_contains",
};

/** Deep enough for any hand-written expression, shallow enough that evaluation never exhausts the stack. */
export const MAX_DEPTH = 64;

interface Frame {
  type: "and" | "or";
  nodes: SearchNode[];
  /** Index of the `(` that opened the group; -1 for the top level. */
  open: number;
}

function termNode(text: string, token: TermToken): SearchNode {
  const op = OPERATOR_NAMES[token.op] ?? "contains";
  const ordering = op === "gt" || op === "ge" || op === "lt" || op === "le";
  // `%` is a wildcard only where matching is textual; in an ordering it is a plain character.
  const value = buildValue(ordering ? [token.chunks.join("%")] : token.chunks, token.quoted);
  if (value.text === "" && !value.pattern && op !== "eq" && op !== "ne") {
    if (token.field === null) {
      throw searchSyntaxError(text, token.pos, "empty keyword", "write a word to look for, or remove the empty quotes");
    }
    const written = `${token.field}:${token.op}`;
    throw searchSyntaxError(
      text,
      token.valuePos,
      `missing value after "${written}"`,
      ordering
        ? `write a value to compare with, e.g. ${written}10`
        : `write ${token.field}:= for "is empty", ${token.field}:-= for "is not empty", or a value to look for`,
    );
  }
  if (token.field === null) return { type: "keyword", value };
  // A field named constructor or __proto__ would read Object's members, not the record's: refused wherever a search is written.
  if (token.field.split(".").some(isPrototypeKey)) {
    throw searchSyntaxError(text, token.pos, `the field ${JSON.stringify(token.field)} is refused`, PROTOTYPE_KEYS_RULE);
  }
  return { type: "term", field: token.field, op, value };
}

/** One member groups nothing: `(a)` is `a`. */
function close(frame: Frame): SearchNode {
  if (frame.nodes.length === 1 && frame.nodes[0]) return frame.nodes[0];
  return { type: frame.type, nodes: frame.nodes };
}

/**
 * Parses a search expression once, into a plain data tree. Blank text matches
 * every record. Syntax errors are `search_syntax` ConveyorErrors whose message
 * points at the faulty character; `details` holds `position` (1-based) and
 * `expression`.
 */
export function parseSearch(text: string): SearchNode {
  let top: Frame = { type: "and", nodes: [], open: -1 };
  const stack: Frame[] = [top];
  for (const token of tokenize(text)) {
    if (token.kind === "open") {
      if (stack.length > MAX_DEPTH) {
        throw searchSyntaxError(text, token.pos, `parentheses nested deeper than ${MAX_DEPTH} levels`, "simplify the expression");
      }
      top = { type: top.type === "and" ? "or" : "and", nodes: [], open: token.pos };
      stack.push(top);
    } else if (token.kind === "close") {
      if (stack.length === 1) {
        throw searchSyntaxError(text, token.pos, 'unbalanced ")"', 'remove it, or open the group with "(" earlier; quote values that contain parentheses');
      }
      const done = stack.pop() ?? top;
      if (done.nodes.length === 0) {
        throw searchSyntaxError(text, done.open, "empty parentheses", "put at least one term inside, or remove them");
      }
      top = stack[stack.length - 1] ?? top;
      top.nodes.push(close(done));
    } else {
      top.nodes.push(termNode(text, token));
    }
  }
  if (stack.length > 1) {
    throw searchSyntaxError(text, top.open, 'unbalanced "("', 'close the group with ")"; quote values that contain parentheses, e.g. title:="Shirt (XL)"');
  }
  return top.nodes.length === 0 ? { type: "and", nodes: [] } : close(top);
}
