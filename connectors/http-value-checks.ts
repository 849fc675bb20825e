/**
 * The checks of a trigger's XPath and regular expression, made when a
 * definition is read. Apart from http-values.ts, which evaluates them on an
 * answer: reading a definition needs only the XPath parser, not the XML
 * parser and the JSONPath library the connector loads when it runs.
 *
 * @module
 */

import type * as XPath from "xpath";
import { lazyRequire } from "../src/lazy-require.js";

// Loaded by the first trigger with an xpath: every definition's check knows this module, few use XPath.
const xpathLib = lazyRequire<typeof XPath>("xpath");

export interface XPathResult {
  stringValue(): string;
  toArray?: () => unknown[];
}

/** The `parse` of the xpath package; its typings only declare the one-shot `select`. */
export function parseXPath(expression: string): { evaluate(o: { node: unknown; allowAnyNamespaceForNoPrefix: boolean }): XPathResult } {
  return (xpathLib() as unknown as { parse: (expression: string) => { evaluate(o: { node: unknown; allowAnyNamespaceForNoPrefix: boolean }): XPathResult } }).parse(expression);
}

/** Null when `expression` is a valid XPath 1.0 expression, else why not. */
export function xpathProblem(expression: string): string | null {
  try {
    parseXPath(expression);
    return null;
  } catch (err) {
    return `is not a valid XPath 1.0 expression: ${String(err)}`;
  }
}

/** Null when `pattern` compiles and has a capture group, else why not. */
export function regexProblem(pattern: string): string | null {
  try {
    const groups = new RegExp(`${pattern}|`).exec("")?.length ?? 1;
    return groups > 1 ? null : "has no capture group: the value is what the first ( ) matches";
  } catch (err) {
    return `is not a valid regular expression: ${(err as Error).message}`;
  }
}
