/**
 * The definition's view of a template: the problem `conveyor check` and the
 * API report for `file_configs[i].template`, with the template's line and
 * column. `<<parameter>>` references are checked as blanks of their own
 * width, so the columns stay those of the written template; a problem in a
 * tag that holds one waits for its value (the template is checked again once
 * resolved, at the start of a run).
 *
 * @module
 */

import { templateProblem } from "./compile.js";

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
