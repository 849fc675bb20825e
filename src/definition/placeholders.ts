/**
 * Placeholders (automations.md, "Parameters and placeholders"). Both spellings
 * exist in the wild: `<<name>>` and `{{name}}` insert parameter `name` (names may
 * contain spaces). A `{{TOKEN}}` that is no parameter is a run-time token; inside
 * `field_run` and `setValue`, `{{field}}` names a field of the current record.
 */

export const RUN_TOKENS = ["DATE", "DATETIME", "TIMESTAMP", "RUN_ID"] as const;
export type RunToken = (typeof RUN_TOKENS)[number];

export interface PlaceholderRef {
  /** The text as written, e.g. `<< sftp password >>`. */
  raw: string;
  /** The name inside, trimmed. */
  name: string;
  spelling: "angle" | "brace";
}

// Lazy and bracket-free inside, so `<<a>> and <<b>>` are two references, not one.
const PLACEHOLDER = /<<\s*([^<>]+?)\s*>>|\{\{\s*([^{}]+?)\s*\}\}/g;
// A Twig template's `{{ … }}` is Twig's own: only `<<name>>` is a placeholder there, also inside `{{ }}`.
const ANGLE_PLACEHOLDER = /<<\s*([^<>]+?)\s*>>/g;
const WHOLE_PLACEHOLDER = /^\s*(?:<<\s*[^<>]+?\s*>>|\{\{\s*[^{}]+?\s*\}\})\s*$/;

export function findPlaceholders(text: string, angleOnly = false): PlaceholderRef[] {
  const refs: PlaceholderRef[] = [];
  for (const m of text.matchAll(angleOnly ? ANGLE_PLACEHOLDER : PLACEHOLDER)) {
    const angle = m[1];
    refs.push(angle !== undefined ? { raw: m[0], name: angle, spelling: "angle" } : { raw: m[0], name: m[2] ?? "", spelling: "brace" });
  }
  return refs;
}

export function hasPlaceholder(text: string): boolean {
  return findPlaceholders(text).length > 0;
}

/** True when the whole string is one placeholder (`"<<ftp port>>"`): the field may be a number once resolved. */
export function isWholePlaceholder(text: string): boolean {
  return WHOLE_PLACEHOLDER.test(text);
}

export function isRunToken(name: string): name is RunToken {
  return (RUN_TOKENS as readonly string[]).includes(name);
}

/**
 * Replaces each placeholder with what `lookup` returns for it; `undefined`
 * leaves it as written (a record reference for the mapper, or an error the
 * caller reports).
 */
export function substitute(text: string, lookup: (ref: PlaceholderRef) => string | undefined, angleOnly = false): string {
  return text.replace(angleOnly ? ANGLE_PLACEHOLDER : PLACEHOLDER, (raw: string, angle: string | undefined, brace: string | undefined) => {
    const ref: PlaceholderRef = angle !== undefined ? { raw, name: angle, spelling: "angle" } : { raw, name: brace ?? "", spelling: "brace" };
    return lookup(ref) ?? raw;
  });
}

export interface TokenContext {
  runId: string;
  now: Date;
  timezone: string;
}

interface WallClock {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
}

function wallClock(now: Date, timezone: string): WallClock {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(now);
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? "00";
  return { year: get("year").padStart(4, "0"), month: get("month"), day: get("day"), hour: get("hour"), minute: get("minute"), second: get("second") };
}

export function tokenValue(token: RunToken, ctx: TokenContext): string {
  if (token === "RUN_ID") return ctx.runId;
  if (token === "TIMESTAMP") return String(Math.floor(ctx.now.getTime() / 1000));
  const c = wallClock(ctx.now, ctx.timezone);
  if (token === "DATE") return `${c.year}-${c.month}-${c.day}`;
  return `${c.year}${c.month}${c.day}-${c.hour}${c.minute}${c.second}`;
}

/**
 * Renders the run-time tokens of a text: `{{DATE}}` YYYY-MM-DD and `{{DATETIME}}`
 * YYYYMMDD-HHmmss in `timezone`, `{{TIMESTAMP}}` Unix seconds, `{{RUN_ID}}`.
 * Anything else is left as written.
 */
export function renderTokens(text: string, ctx: TokenContext): string {
  return substitute(text, (ref) => (ref.spelling === "brace" && isRunToken(ref.name) ? tokenValue(ref.name, ctx) : undefined));
}
