import type { SearchNode } from "./types.js";

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

/** A match-all node: what a blank expression parses to. */
export function isMatchAll(node: SearchNode): boolean {
  return node.type === "and" && node.nodes.length === 0;
}
