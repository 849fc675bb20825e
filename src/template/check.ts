/**
 * The definition's view of a template: the problem `conveyor check` and the
 * API report for `file_configs[i].template`, with the template's line and
 * column. `<<parameter>>` references are checked as blanks of their own
 * width (their values are known at run time, when the template is checked
 * again as resolved), so the columns stay those of the written template.
 *
 * @module
 */

import { templateProblem } from "./compile.js";

const ANGLE = /<<\s*[^<>]+?\s*>>/g;

/** Null when the template compiles; else "line L, column C: what is wrong". */
export function checkTemplateText(source: string, resolved = false): string | null {
  const text = resolved ? source : source.replace(ANGLE, (raw) => " ".repeat(raw.length));
  const problem = templateProblem(text);
  return problem ? `line ${problem.line}, column ${problem.column}: ${problem.message}` : null;
}

export const TEMPLATE_ALLOWED = "a Twig template: output {{ … }}, tags if/for/set/apply/with, comments {# … #}, the filters and functions listed in the README; no include, embed, extends, import, source";
