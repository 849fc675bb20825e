import type { SearchNode, SearchOperator, SearchValue } from "./types.js";

/*
 * Working with a parsed tree as data: which fields it reads, whether it depends
 * on the clock, and writing it back as text (to pass a combined or rewritten
 * expression on to the service, which takes text).
 */

/** What `searchFields` lists for a keyword term: it reads every field. */
export const ALL_FIELDS = "*";

/**
 * The field names an expression reads, each once, in the order written (as
 * written, dotted paths included). A keyword reads every field, listed as "*",
 * so a caller that fetches only the listed fields knows to fetch them all.
 */
export function searchFields(node: SearchNode): string[] {
  const seen = new Set<string>();
  const visit = (n: SearchNode): void => {
    if (n.type === "term") seen.add(n.field);
    else if (n.type === "keyword") seen.add(ALL_FIELDS);
    else n.nodes.forEach(visit);
  };
  visit(node);
  return [...seen];
}

/** Whether the tree holds a relative date, i.e. whether its result depends on the clock. */
export function usesClock(node: SearchNode): boolean {
  switch (node.type) {
    case "and":
    case "or":
      return node.nodes.some(usesClock);
    case "term":
      return node.value.relative !== null;
    case "keyword":
      return false;
  }
}

/** A match-all node: what a blank expression parses to. */
export function isMatchAll(node: SearchNode): boolean {
  return node.type === "and" && node.nodes.length === 0;
}

/** Characters that end or change an unquoted value, or would be read as an operator or a field. */
const NEEDS_QUOTES = /[\s()"%\\:]|^[=<>!-]/;

/**
 * A value written so the parser reads it back exactly: bare when it is plain,
 * otherwise double-quoted with `"`, `\` and `%` escaped (so `%` is literal).
 */
export function quoteSearchValue(value: string): string {
  if (value !== "" && !NEEDS_QUOTES.test(value)) return value;
  return `"${escapeQuoted(value)}"`;
}

function escapeQuoted(value: string): string {
  return value.replace(/["\\%]/g, (c) => `\\${c}`);
}

const OPERATOR_TEXT: Record<SearchOperator, string> = {
  eq: "=",
  ne: "-=",
  gt: ">",
  ge: ">=",
  lt: "<",
  le: "<=",
  contains: "",
  not_contains: "-",
};

function formatValue(value: SearchValue): string {
  if (value.pattern) return `"${value.pattern.map(escapeQuoted).join("%")}"`;
  return value.raw === "" ? "" : quoteSearchValue(value.raw);
}

function formatNode(node: SearchNode, parent: "and" | "or"): string {
  switch (node.type) {
    case "term": {
      const field = /[\s()":]/.test(node.field) ? `"${escapeQuoted(node.field)}"` : node.field;
      return `${field}:${OPERATOR_TEXT[node.op]}${formatValue(node.value)}`;
    }
    case "keyword":
      return formatValue(node.value);
    default: {
      // Nested groups alternate AND/OR, so a group of the parent's kind is written flat.
      const inner = node.nodes.map((n) => formatNode(n, node.type)).join(" ");
      return node.type === parent ? inner : `(${inner})`;
    }
  }
}

/**
 * The expression as text that parses back to an equivalent tree. Case inside
 * `%` patterns is not kept (matching ignores it anyway).
 */
export function formatSearch(node: SearchNode): string {
  return formatNode(node, "and");
}
