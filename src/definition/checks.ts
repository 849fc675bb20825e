import type Iconv from "iconv-lite";
import { lazyRequire } from "../lazy-require.js";
import { isConveyorError } from "../errors.js";
import { parseSearch } from "../search/index.js";
import type { Limit } from "./types.js";

/** Small value checks shared by parsing and by resolution (which re-checks what placeholders hid). */

export function checkTimezone(zone: string): string | null {
  // UTC, every definition's default, is a zone in every ICU build. Asking Intl about it would load ICU's time
  // zone data, which a run that formats no local time never needs, on the way to the first row.
  if (zone === "UTC") return null;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return null;
  } catch {
    return `"${zone}" is not an IANA time zone`;
  }
}

/**
 * The import `name` as a RegExp over the whole base name: `inventory_\d+\.csv`
 * or `/inventory_\d+\.csv/i`. Anchored so `stock.csv` does not also pick
 * `old_stock.csv.bak`.
 */
export function compileNamePattern(name: string): RegExp {
  const slashed = /^\/(.*)\/([a-z]*)$/s.exec(name);
  if (slashed) {
    const flags = (slashed[2] ?? "").replace(/g/g, "");
    return new RegExp(`^(?:${slashed[1] ?? ""})$`, flags);
  }
  return new RegExp(`^(?:${name})$`);
}

export function checkNamePattern(name: string): string | null {
  try {
    compileNamePattern(name);
    return null;
  } catch (err) {
    return `not a valid regular expression: ${(err as Error).message}`;
  }
}

/** A pattern of `replace`: `/…/flags` is a regular expression, anything else literal text. */
export function checkReplacePattern(pattern: string): string | null {
  const slashed = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  if (!slashed) return null;
  try {
    new RegExp(slashed[1] ?? "", slashed[2]);
    return null;
  } catch (err) {
    return `not a valid regular expression: ${(err as Error).message}`;
  }
}

export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 255)
    .replace(/-+$/, "");
  return slug || "automation";
}

export function checkHttpUrl(address: string): string | null {
  try {
    const url = new URL(address);
    return url.protocol === "http:" || url.protocol === "https:" ? null : `"${address}" is not an http(s) URL`;
  } catch {
    return `"${address}" is not a URL`;
  }
}

export const LIMIT_ALLOWED = 'a whole number of records (e.g. 500) or a share such as "10%" (0–100%)';

/** `remove_limit` / `error_limit`: 500, "500", "10%", "12.5%". Null when malformed. */
export function parseLimit(value: unknown): Limit | null {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? { kind: "count", value } : null;
  if (typeof value !== "string") return null;
  const text = value.trim();
  const share = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
  if (share) {
    const pct = Number(share[1]);
    return pct <= 100 ? { kind: "share", value: pct / 100 } : null;
  }
  return /^\d+$/.test(text) ? { kind: "count", value: Number(text) } : null;
}

/** Only a definition that names an `encoding` loads it. */
const iconv = lazyRequire<typeof Iconv>("iconv-lite");

export function checkEncoding(encoding: string): string | null {
  return iconv().encodingExists(encoding) ? null : `unknown character encoding "${encoding}"`;
}

/** Null when the search expression parses; otherwise the parser's message (it points at the character). */
export function checkSearch(expression: string): string | null {
  try {
    parseSearch(expression);
    return null;
  } catch (err) {
    if (isConveyorError(err)) return `search syntax: ${err.message}${err.hint ? ` (${err.hint})` : ""}`;
    throw err;
  }
}
