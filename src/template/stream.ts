/**
 * Streaming a `payload_multi: 1` template: a top-level
 * `{% for r in data %}…{% endfor %}` is cut into the text before the loop
 * (rendered once), the loop's body (rendered per record) and the text after
 * it (once), so a million records never sit in memory. twig.js's whitespace
 * rules at the cuts (the newline after a tag, `{%-` and `-%}`) are applied
 * here, so the streamed output is what one render of the whole would give.
 *
 * @module
 */

import type { TwigRawToken } from "twig";
import { sandboxedTwig } from "./sandbox.js";

export interface StreamParts {
  head: string;
  body: string;
  tail: string;
  /** The loop variable (`r` in `for r in data`). */
  valueVar: string;
  /** `i` in `for i, r in data`: the record's 0-based position. */
  keyVar: string | null;
}

const LOOP = /^for\s+([A-Za-z_]\w*)(?:\s*,\s*([A-Za-z_]\w*))?\s+in\s+data$/;
const OPENS = /^(if|for|set\s+\w+\s*$|filter|apply|spaceless|with|autoescape|verbatim)\b/;
const CLOSES = /^end(if|for|set|filter|apply|spaceless|with|autoescape|verbatim)\b/;

let tokenizer: ((source: string) => TwigRawToken[]) | null = null;

function tokens(source: string): TwigRawToken[] {
  if (!tokenizer) {
    const { core } = sandboxedTwig({ timezone: "UTC", now: () => new Date() });
    tokenizer = (s) => core.tokenize.call({ options: {} }, s);
  }
  return tokenizer(source);
}

const trimsBefore = (t: TwigRawToken): boolean => t.type.endsWith("_pre") || t.type.endsWith("_both");
const trimsAfter = (t: TwigRawToken): boolean => t.type.endsWith("_post") || t.type.endsWith("_both");

/** Text after a tag as twig.js emits it: one newline right after `%}` is eaten, all whitespace after `-%}`. */
function after(text: string, tag: TwigRawToken): string {
  if (trimsAfter(tag)) return text.trimStart();
  return text.startsWith("\n") ? text.slice(1) : text;
}

function before(text: string, tag: TwigRawToken): string {
  return trimsBefore(tag) ? text.trimEnd() : text;
}

/** The parts, or null when the template has no single top-level loop over `data` (or reads `data` outside it). */
export function streamParts(source: string): StreamParts | null {
  let depth = 0;
  let loop: { tag: TwigRawToken; match: RegExpExecArray } | null = null;
  let end: TwigRawToken | null = null;
  for (const token of tokens(source)) {
    if (!token.type.startsWith("logic")) continue;
    const value = token.value.trim();
    if (depth === 0 && !loop) {
      const match = LOOP.exec(value);
      if (match) {
        loop = { tag: token, match };
        depth++;
        continue;
      }
    }
    if (loop && !end && depth === 1 && /^else\b/.test(value)) return null;
    if (CLOSES.test(value)) {
      depth--;
      if (loop && !end && depth === 0) end = token;
    } else if (OPENS.test(value)) depth++;
  }
  if (!loop || !end) return null;
  const head = before(source.slice(0, loop.tag.position.start), loop.tag);
  const body = before(after(source.slice(loop.tag.position.end, end.position.start), loop.tag), end);
  const tail = after(source.slice(end.position.end), end);
  if (/\bdata\b/.test(head) || /\bdata\b/.test(tail)) return null;
  return { head, body, tail, valueVar: loop.match[2] ?? loop.match[1] ?? "r", keyVar: loop.match[2] ? (loop.match[1] ?? null) : null };
}
