import { matchesSearch, parseSearch, shortcutSearch, type SearchNode } from "../search/index.js";
import { HttpError } from "../http/envelopes.js";

/** A record as the search language sees it: field name to text. */
export type SearchRecord = Record<string, string>;
export type Matcher = (record: SearchRecord) => boolean;

/**
 * The one door from the embedded service to the search language, so the
 * service evaluates exactly what the worker evaluates. A syntax error is the
 * caller's mistake: 400 with the parser's message (it points at the character).
 */
export function compileQuery(text: string | undefined): Matcher {
  if (text === undefined || text.trim() === "") return () => true;
  let node: SearchNode;
  try {
    node = parseSearch(text);
  } catch (err) {
    throw new HttpError(400, `invalid search ${JSON.stringify(text)}: ${(err as Error).message}`, [(err as Error).message]);
  }
  return (record) => matchesSearch(node, record);
}

/** The search a path segment of `/v3/orders/<segment>` stands for (search.md "Order retrieval shortcuts"). */
export function pathShortcut(segment: string): string | undefined {
  return shortcutSearch(segment);
}

/** Both searches must hold. */
export function andQuery(a: string | undefined, b: string | undefined): string | undefined {
  if (!a?.trim()) return b;
  if (!b?.trim()) return a;
  return `${a} ${b}`;
}
