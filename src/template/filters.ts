/**
 * The filters we change on top of twig.js: `escape('xml')` (twig.js has no
 * such strategy), `json_encode` that gives valid JSON for escaped text too
 * (twig.js encodes a marked-up string as an object of its characters), and
 * `date` in the automation's time zone rather than the process's.
 *
 * @module
 */

import type { TwigCore, TwigFilter } from "twig";
import { formatDate, toInstant } from "./date-format.js";

/** XML 1.0 forbids most control characters even as references: they are dropped. */
// eslint-disable-next-line no-control-regex
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function escapeXml(text: string): string {
  return text
    .replace(XML_FORBIDDEN, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** A twig.js marked-up string is a String object: JSON wants the text. */
function plain(value: unknown): unknown {
  if (value instanceof String) return value.toString();
  if (Array.isArray(value)) return value.map(plain);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    const keys = (value as { _keys?: unknown })._keys;
    for (const key of Array.isArray(keys) ? (keys as string[]) : Object.keys(value)) {
      if (key !== "_keys") out[key] = plain((value as Record<string, unknown>)[key]);
    }
    return out;
  }
  return value;
}

export function jsonEncode(value: unknown): string {
  return JSON.stringify(plain(value)) ?? "null";
}

/** Texts a filter may build: larger ones would be flattened in one allocation, past what a render should hold. */
const MAX_FILTER_TEXT = 64 * 1024 * 1024;

export interface FilterSettings {
  /** The automation's IANA time zone. */
  timezone: string;
  now: () => Date;
}

export function installFilters(Twig: TwigCore, settings: FilterSettings): void {
  const escape: TwigFilter | undefined = Twig.filters.escape;
  const ours: TwigFilter = (value, params) => {
    if (params?.[0] === "xml") return value === undefined || value === null ? "" : Twig.Markup(escapeXml(String(value)), "xml");
    return escape ? escape(value, params) : value;
  };
  Twig.filters.escape = ours;
  Twig.filters.e = ours;
  Twig.filters.json_encode = (value) => jsonEncode(value);
  const format = Twig.filters.format;
  if (format) {
    Twig.filters.format = (value, params) => {
      if (/%[^a-zA-Z%]*\d{7,}/.test(String(value))) throw new Twig.Error("format: a field width of a million characters or more is not allowed");
      return format(value, params);
    };
  }
  const replace = Twig.filters.replace;
  if (replace) {
    Twig.filters.replace = (value, params) => {
      const text = String(value ?? "");
      const pairs = params?.[0] !== null && typeof params?.[0] === "object" ? Object.entries(params[0] as Record<string, unknown>) : [];
      let size = text.length;
      for (const [from, to] of pairs) if (from !== "") size += (text.split(from).length - 1) * String(to).length;
      if (size > MAX_FILTER_TEXT) throw new Twig.Error(`replace: the result would be more than ${MAX_FILTER_TEXT} characters`);
      return replace(value, params);
    };
  }
  Twig.filters.date = (value, params) => {
    const zone = typeof params?.[1] === "string" ? params[1] : settings.timezone;
    const instant = toInstant(value, zone, settings.now());
    if (!instant) throw new Twig.Error(`date: "${String(value)}" is not a date (write an ISO date such as 2026-03-01T10:00:00Z, Unix seconds, or "now")`);
    return formatDate(instant, typeof params?.[0] === "string" ? params[0] : "F j, Y H:i", zone);
  };
}
