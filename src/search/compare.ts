import type { Scalar, SearchValue, TimeSpan } from "./types.js";
import { readDate, readNumber } from "./values.js";

/*
 * Comparing one field value with one term value. The term side was read at
 * parse time (search/values.ts); the field side is read here, lazily: a text
 * comparison never reads the field as a number and vice versa.
 */

/** Trimmed, lowercased text of a field value; missing and null read as "". */
export function fieldText(v: Scalar): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v.trim().toLowerCase();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? "" : v.toISOString().toLowerCase();
  return String(v).toLowerCase();
}

export function fieldNumber(v: Scalar): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string") return readNumber(v.trim());
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return Number(v);
  return null;
}

export function fieldDate(v: Scalar): TimeSpan | null {
  if (typeof v === "string") return readDate(v.trim());
  if (v instanceof Date) {
    const ms = v.getTime();
    return Number.isNaN(ms) ? null : { first: ms, last: ms };
  }
  return null;
}

export function isEmpty(v: Scalar): boolean {
  if (v === undefined || v === null) return true;
  return typeof v === "string" && v.trim() === "";
}

/** The boolean reading of a field: true, 1, "1", "true" / false, 0, "0", "false", empty. */
export function fieldBool(v: Scalar): boolean | null {
  switch (typeof v) {
    case "boolean":
      return v;
    case "number":
      return v === 1 ? true : v === 0 ? false : null;
    case "string": {
      const t = v.trim().toLowerCase();
      if (t === "1" || t === "true") return true;
      if (t === "0" || t === "false" || t === "") return false;
      return null;
    }
    default:
      return v === undefined || v === null ? false : null;
  }
}

/** `%` patterns are anchored: `ab%` starts with ab, `%ab` ends with it, `a%b` both. */
export function matchesPattern(text: string, pattern: readonly string[]): boolean {
  const first = pattern[0] ?? "";
  const lastPiece = pattern.length > 1 ? (pattern[pattern.length - 1] ?? "") : "";
  if (!text.startsWith(first)) return false;
  const limit = text.length - lastPiece.length;
  if (limit < first.length || !text.endsWith(lastPiece)) return false;
  let at = first.length;
  for (let i = 1; i < pattern.length - 1; i += 1) {
    const piece = pattern[i] ?? "";
    const found = text.indexOf(piece, at);
    if (found < 0 || found + piece.length > limit) return false;
    at = found + piece.length;
  }
  return true;
}

/**
 * Equality: empty value → field is empty; boolean reading for 0/1/true/false;
 * numbers when both sides are numbers; time when the term is a date and the
 * field reads as one (a whole-day date equals any time of that day); else text.
 */
export function valueEquals(v: Scalar, value: SearchValue, span: TimeSpan | null): boolean {
  if (value.pattern) return matchesPattern(fieldText(v), value.pattern);
  if (value.text === "") return isEmpty(v);
  if (value.bool !== null) {
    const b = fieldBool(v);
    if (b !== null) return b === value.bool;
  }
  if (value.number !== null) {
    const n = fieldNumber(v);
    if (n !== null) return n === value.number;
  } else if (span) {
    const d = fieldDate(v);
    if (d) return d.first >= span.first && d.first <= span.last;
  }
  return fieldText(v) === value.text;
}

export function valueContains(v: Scalar, value: SearchValue): boolean {
  if (value.pattern) return matchesPattern(fieldText(v), value.pattern);
  // The term text is trimmed and not empty, so trimming the field cannot change a substring match: skip it.
  if (typeof v === "string") return v.toLowerCase().includes(value.text);
  return fieldText(v).includes(value.text);
}

/**
 * Orderings. A numeric term needs a numeric field and a date term a date field,
 * otherwise the term does not hold: `stock:>0` is false for "n/a", not a text
 * comparison. Other terms compare text. A whole-day date orders as its day:
 * `date:<=2026-11-01` includes 23:59 on that day, `date:>2026-11-01` starts the next.
 */
export function valueOrders(v: Scalar, value: SearchValue, span: TimeSpan | null, op: "gt" | "ge" | "lt" | "le"): boolean {
  let low: number;
  let high: number;
  let x: number;
  if (value.number !== null) {
    const n = fieldNumber(v);
    if (n === null) return false;
    x = n;
    low = high = value.number;
  } else if (span) {
    const d = fieldDate(v);
    if (!d) return false;
    x = d.first;
    low = span.first;
    high = span.last;
  } else {
    const t = fieldText(v);
    if (op === "gt") return t > value.text;
    if (op === "ge") return t >= value.text;
    if (op === "lt") return t < value.text;
    return t <= value.text;
  }
  if (op === "gt") return x > high;
  if (op === "ge") return x >= low;
  if (op === "lt") return x < low;
  return x <= high;
}
