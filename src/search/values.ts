import type { RelativeDate, SearchValue, TimeSpan, TimeUnit } from "./types.js";

/*
 * Reading numbers and dates. Used twice: once per term value at parse time, and
 * once per field value while evaluating, so these readers avoid allocation where
 * they can and reject early on the first character that cannot fit.
 */

const DAY_MS = 86_400_000;

/**
 * Plain decimal numbers only. `1e3` and `713752E1` stay text because such
 * identifiers are common in feeds; a leading zero (`0700`, `00`) marks a code,
 * not a quantity, so it is text too. `0`, `0.5`, `-0.5` are numbers.
 */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;

export function readNumber(text: string): number | null {
  if (text.length === 0 || text.length > 40) return null;
  const c = text.charCodeAt(0);
  // Cheap rejection of most text before the regular expression runs.
  if (c !== 45 && (c < 48 || c > 57)) return null;
  return NUMBER.test(text) ? Number(text) : null;
}

const DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * `2026-11-01`, `2026-11-01 08:00[:00[.000]]`, `2026-11-01T08:00:00Z`, with an
 * optional offset (`+02:00`, `+0200`, `+02`). Without an offset the time is UTC.
 * A date without a time spans its whole day.
 */
export function readDate(text: string): TimeSpan | null {
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return null;
  const m = DATE.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (m[4] === undefined) {
    const start = Date.UTC(year, month - 1, day);
    return { first: start, last: start + DAY_MS - 1 };
  }
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (hour > 23 || minute > 59 || second > 59) return null;
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const digits = zone.slice(1).replace(":", "");
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || "0");
    ms -= sign * offsetMinutes * 60_000;
  }
  return { first: ms, last: ms };
}

const RELATIVE = /^([+-])?\s*(\d{1,6})\s*(second|sec|minute|min|hour|day|week|month|year)s?(\s+ago)?$/;
const UNIT_ALIASES: Record<string, TimeUnit> = { sec: "second", min: "minute" };

/** `now`, `today`, `yesterday`, `tomorrow`, `-1 day`, `+2 hours`, `3 weeks ago`. Input is lowercased. */
export function readRelative(text: string): RelativeDate | null {
  switch (text) {
    case "now":
      return { base: "now", amount: 0, unit: "second" };
    case "today":
      return { base: "today", amount: 0, unit: "day" };
    case "yesterday":
      return { base: "today", amount: -1, unit: "day" };
    case "tomorrow":
      return { base: "today", amount: 1, unit: "day" };
  }
  const m = RELATIVE.exec(text);
  if (!m || m[2] === undefined || m[3] === undefined) return null;
  if (m[1] !== undefined && m[4] !== undefined) return null;
  const negative = m[1] === "-" || m[4] !== undefined;
  const amount = Number(m[2]) * (negative ? -1 : 1);
  const unit = UNIT_ALIASES[m[3]] ?? (m[3] as TimeUnit);
  return { base: "now", amount, unit };
}

const FIXED_UNIT_MS: Record<TimeUnit, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: DAY_MS,
  week: 7 * DAY_MS,
  month: 0,
  year: 0,
};

/** Calendar months: the day of month is kept, or clamped to the last day (Mar 31 − 1 month = Feb 28/29). */
function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(d.getUTCDate(), daysInMonth(year, month + 1));
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

/** The span a relative date stands for at the moment `nowMs`. */
export function resolveRelative(rel: RelativeDate, nowMs: number): TimeSpan {
  if (rel.base === "today") {
    const start = Math.floor(nowMs / DAY_MS) * DAY_MS + rel.amount * DAY_MS;
    return { first: start, last: start + DAY_MS - 1 };
  }
  let ms: number;
  if (rel.unit === "month") ms = addMonths(nowMs, rel.amount);
  else if (rel.unit === "year") ms = addMonths(nowMs, rel.amount * 12);
  else ms = nowMs + rel.amount * FIXED_UNIT_MS[rel.unit];
  return { first: ms, last: ms };
}

const BOOLEANS = new Map<string, boolean>([
  ["0", false],
  ["1", true],
  ["false", false],
  ["true", true],
]);

/**
 * Everything the evaluator needs about a term value, read once. `chunks` are the
 * pieces between unescaped `%` (one piece: not a pattern).
 */
export function buildValue(chunks: readonly string[], quoted: boolean): SearchValue {
  const raw = chunks.join("%");
  const trimmed = raw.trim();
  const text = trimmed.toLowerCase();
  let pattern: string[] | null = null;
  if (chunks.length > 1) {
    const last = chunks.length - 1;
    pattern = chunks.map((c, i) => {
      const t = i === 0 ? c.trimStart() : i === last ? c.trimEnd() : c;
      return t.toLowerCase();
    });
  }
  const number = pattern ? null : readNumber(trimmed);
  const date = pattern || number !== null ? null : readDate(trimmed);
  const relative = pattern || number !== null || date ? null : readRelative(text);
  return { raw, quoted, text, number, bool: BOOLEANS.get(text) ?? null, date, relative, pattern };
}
