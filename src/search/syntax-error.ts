import { ConveyorError } from "../errors.js";

/** How much of a long expression is shown on each side of the faulty character. */
const WINDOW = 60;

/**
 * The expression on one line with a caret under the character at `index`, cut to
 * a window around it so a long expression still points at the right place.
 */
export function caretLines(expression: string, index: number): string {
  const flat = expression.replace(/[\r\n\t]/g, " ");
  const start = Math.max(0, index - WINDOW);
  const end = Math.min(flat.length, index + WINDOW);
  let shown = flat.slice(start, end);
  let caretAt = index - start;
  if (start > 0) {
    shown = `…${shown}`;
    caretAt += 1;
  }
  if (end < flat.length) shown = `${shown}…`;
  return `  ${shown}\n  ${" ".repeat(caretAt)}^`;
}

/**
 * A `search_syntax` error. `index` is 0-based in the code; people and
 * `details.position` see the 1-based column, as editors count.
 */
export function searchSyntaxError(expression: string, index: number, problem: string, hint: string): ConveyorError {
  const position = index + 1;
  return new ConveyorError("search_syntax", `${problem} at position ${position}\n${caretLines(expression, index)}`, {
    details: { position, expression },
    hint,
  });
}
