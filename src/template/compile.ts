/**
 * A template judged before it runs: `conveyor check`, the API's validation
 * and the start of a run see the same problems, each with the line and column
 * in the template (twig.js's own errors carry no position, so every tag and
 * output is compiled on its own, where its offset is known). `<<parameter>>`
 * references are checked as blanks of their own width, so the columns stay
 * those of the written template; a problem in a tag that holds one waits for
 * its value (the template is checked again once resolved, at a run's start).
 *
 * @module
 */

import type { TwigCore, TwigRawToken } from "twig";
import { ALLOWED_FUNCTIONS, FORBIDDEN_TAGS, filterNames, sandboxedTwig, type Sandboxed } from "./sandbox.js";

export interface TemplateProblem {
  message: string;
  line: number;
  column: number;
}

let shared: Sandboxed | null = null;

/** Compiling does not depend on the zone or the clock: one instance serves every check. */
function instance(): Sandboxed {
  shared ??= sandboxedTwig({ timezone: "UTC", now: () => new Date() });
  return shared;
}

/** 1-based line and column of a character offset. */
export function lineColumn(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, Math.max(0, Math.min(offset, source.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: (lines[lines.length - 1] ?? "").length + 1 };
}

function at(source: string, offset: number, message: string): TemplateProblem {
  return { message, ...lineColumn(source, offset) };
}

/** Filters and functions named anywhere in a compiled expression that the sandbox does not have. */
function unknownNames(compiled: unknown, core: TwigCore): string | null {
  const filters = filterNames(core);
  const seen = new Set<unknown>();
  const walk = (node: unknown): string | null => {
    if (node === null || typeof node !== "object" || seen.has(node)) return null;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) {
        const found = walk(item);
        if (found) return found;
      }
      return null;
    }
    const token = node as Record<string, unknown>;
    if (token.type === "Twig.expression.type.filter" && typeof token.value === "string" && !filters.has(token.value)) {
      return `unknown filter "${token.value}" (filters: ${[...filters].sort().join(", ")})`;
    }
    if (token.type === "Twig.expression.type._function" && typeof token.fn === "string" && !ALLOWED_FUNCTIONS.includes(token.fn)) {
      return `function "${token.fn}" is not available (functions: ${ALLOWED_FUNCTIONS.join(", ")})`;
    }
    for (const value of Object.values(token)) {
      const found = walk(value);
      if (found) return found;
    }
    return null;
  };
  return walk(compiled);
}

function tokenize(source: string, core: TwigCore): TwigRawToken[] | TemplateProblem {
  try {
    return core.tokenize.call({ options: {} }, source);
  } catch (err) {
    const message = (err as Error).message;
    // twig.js gives the offset just past the opening delimiter, which is two characters wide ({{, {%, {#).
    const unclosed = /closing bracket '(.+?)' opened near template position (\d+)/.exec(message);
    if (unclosed) return at(source, Number(unclosed[2]) - 2, `this tag is never closed: no '${unclosed[1] ?? ""}' after it`);
    return at(source, 0, message);
  }
}

interface OpenTag {
  type: string;
  name: string;
  start: number;
}

const bareName = (type: string): string => type.replace(/^Twig\.logic\.type\./, "").replace(/_$/, "");

/** Null when the template compiles in the sandbox; else the first problem with its position. */
export function templateProblem(source: string): TemplateProblem | null {
  const { twig, core } = instance();
  const tokens = tokenize(source, core);
  if (!Array.isArray(tokens)) return tokens;
  const open: OpenTag[] = [];
  const self = { options: {} };
  for (const token of tokens) {
    const start = token.position.start;
    if (token.type.startsWith("output")) {
      let compiled: unknown;
      try {
        compiled = core.expression.compile.call(self, { type: token.type, value: token.value });
      } catch (err) {
        return at(source, start, `{{ ${token.value} }}: ${(err as Error).message}`);
      }
      const unknown = unknownNames(compiled, core);
      if (unknown) return at(source, start, unknown);
      continue;
    }
    if (!token.type.startsWith("logic")) continue;
    const word = /^\s*(\w+)/.exec(token.value)?.[1] ?? "";
    if (FORBIDDEN_TAGS.includes(word)) return at(source, start, `{% ${word} %} is not allowed: a template cannot read other templates or files`);
    let compiled: { type: string };
    try {
      compiled = core.logic.compile.call(self, { ...token });
    } catch (err) {
      return at(source, start, `{% ${token.value} %}: ${(err as Error).message}`);
    }
    const unknown = unknownNames(compiled, core);
    if (unknown) return at(source, start, unknown);
    const handler = core.logic.handler[compiled.type];
    let opener = bareName(compiled.type);
    if (handler?.open === false) {
      const top = open.pop();
      if (!top) return at(source, start, `{% ${word} %} closes nothing: no tag is open here`);
      if (!core.logic.handler[top.type]?.next?.includes(compiled.type)) return at(source, start, `{% ${word} %} does not belong after the {% ${top.name} %} on line ${lineColumn(source, top.start).line}`);
      opener = top.name;
    }
    if (handler?.next?.length) open.push({ type: compiled.type, name: opener, start });
  }
  const unclosed = open.pop();
  if (unclosed) return at(source, unclosed.start, `{% ${unclosed.name} %} is never closed (add {% end${unclosed.name} %})`);
  try {
    twig.twig({ data: source, rethrow: true });
  } catch (err) {
    return at(source, 0, (err as Error).message);
  }
  return null;
}

const ANGLE = /<<\s*[^<>]+?\s*>>/g;

/** Null when the template compiles; else "line L, column C: what is wrong". */
export function checkTemplateText(source: string, resolved = false): string | null {
  const text = resolved ? source : source.replace(ANGLE, (raw) => " ".repeat(raw.length));
  const problem = templateProblem(text);
  if (!problem) return null;
  if (!resolved && inPlaceholderTag(source, problem.line, problem.column)) return null;
  return `line ${problem.line}, column ${problem.column}: ${problem.message}`;
}

/** True when the tag that starts at line:column (up to its closing delimiter) holds a `<<parameter>>`. */
function inPlaceholderTag(source: string, line: number, column: number): boolean {
  const lines = source.split("\n");
  const offset = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column - 1;
  const rest = source.slice(offset);
  const close = /[%}#]\}/.exec(rest);
  return rest.slice(0, close ? close.index : rest.length).includes("<<");
}

export const TEMPLATE_ALLOWED = "a Twig template: output {{ … }}, tags if/for/set/apply/with, comments {# … #}, the filters and functions listed in the README; no include, embed, extends, import, source";
