import type * as XmlDom from "@xmldom/xmldom";
import type * as XPath from "xpath";
import { ConveyorError } from "../errors.js";
import { lazyRequire } from "../lazy-require.js";

// Both load with the first XML record that needs them: every run's decoder knows this module, few feeds are XML.
const xmlDom = lazyRequire<typeof XmlDom>("@xmldom/xmldom");
const xpathLib = lazyRequire<typeof XPath>("xpath");

/** One record of an XML file for `xpath: 1`: its own small document, parsed on first use. */
export class XmlRecord {
  private element: unknown = null;

  constructor(
    readonly xml: string,
    readonly namespaces: Readonly<Record<string, string>>,
  ) {}

  /** The record's element, the context node of the field_map expressions. */
  node(): unknown {
    if (this.element === null) {
      const doc = new (xmlDom().DOMParser)({ onError: () => {} }).parseFromString(this.xml, "text/xml");
      this.element = doc.documentElement;
    }
    return this.element;
  }

  toString(): string {
    return this.xml;
  }
}

export function escapeXmlText(text: string): string {
  return text.replace(/[&<>\r]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&#13;"));
}

export function escapeXmlAttr(text: string): string {
  return text.replace(/[&<>"\r\n\t]/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface XPathValue {
  stringValue(): string;
  toArray?: () => unknown[];
}

interface CompiledXPath {
  evaluate(options: { node: unknown; namespaces: Record<string, string>; allowAnyNamespaceForNoPrefix: boolean }): XPathValue;
}

/** The `parse` of the xpath package compiles once; its typings only declare the one-shot `select`. */
const parseXPath = (expression: string): CompiledXPath => (xpathLib() as unknown as { parse: (expression: string) => CompiledXPath }).parse(expression);

/**
 * A field_map XPath 1.0 expression relative to one record. A node-set gives the text of its first
 * node (like JSONPath's first match) and an empty one gives undefined; strings, numbers and
 * booleans give their text. Unprefixed names match elements of a default namespace too.
 */
export function compileXPath(expression: string): (record: XmlRecord) => string | undefined {
  let compiled: CompiledXPath;
  try {
    compiled = parseXPath(expression);
  } catch (err) {
    throw new ConveyorError("definition_invalid", `field_map value ${JSON.stringify(expression)} is not a valid XPath 1.0 expression`, {
      cause: err,
    });
  }
  return (record) => {
    let value: XPathValue;
    try {
      value = compiled.evaluate({ node: record.node(), namespaces: { ...record.namespaces }, allowAnyNamespaceForNoPrefix: true });
    } catch (err) {
      throw new ConveyorError("row_invalid", `XPath ${JSON.stringify(expression)} failed on this record: ${String(err)}`, { cause: err });
    }
    if (typeof value.toArray === "function" && value.toArray().length === 0) return undefined;
    return value.stringValue();
  };
}
