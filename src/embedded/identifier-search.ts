/**
 * Items named by identifier: a search that is `guid:=A`, or an OR group
 * `(guid:=A guid:=B …)` on one identifier field, as a set of the texts it
 * compares with. An export of such a search (an import reading the values
 * before of the records it changed) looks at each item's identifier, from
 * its index, instead of parsing every item and testing every term on it.
 *
 * @module
 */

import { parseSearch, type SearchNode, type SearchValue } from "../search/index.js";

export interface IdentifierLookup {
  field: "guid" | "sku";
  /** Trimmed and lowercased, as the search language compares text. */
  texts: Set<string>;
}

/**
 * A value that compares as text alone: not empty, no pattern, and nothing the
 * language reads as a number, a boolean or a date, which compare otherwise.
 */
function plainText(value: SearchValue): boolean {
  return value.text !== "" && value.pattern === null && value.number === null && value.bool === null && value.date === null && value.relative === null;
}

/** The terms of a search that is one term or one OR group of them (through groups of one); null otherwise. */
function terms(node: SearchNode): SearchNode[] | null {
  if (node.type === "term") return [node];
  if (node.type === "keyword") return null;
  if (node.nodes.length === 1 && node.nodes[0]) return terms(node.nodes[0]);
  if (node.type !== "or") return null;
  const out: SearchNode[] = [];
  for (const child of node.nodes) {
    const inner = terms(child);
    if (!inner) return null;
    out.push(...inner);
  }
  return out;
}

/** The lookup a search stands for, or null when it is anything else. */
export function identifierLookup(search: string): IdentifierLookup | null {
  if (search.trim() === "") return null;
  const nodes = terms(parseSearch(search));
  if (!nodes || nodes.length === 0) return null;
  let field: IdentifierLookup["field"] | null = null;
  const texts = new Set<string>();
  for (const node of nodes) {
    if (node.type !== "term" || node.op !== "eq" || !plainText(node.value)) return null;
    if (node.field !== "guid" && node.field !== "sku") return null;
    if (field !== null && node.field !== field) return null;
    field = node.field;
    texts.add(node.value.text);
  }
  return field === null ? null : { field, texts };
}
