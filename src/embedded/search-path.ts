import { HttpError } from "../http/envelopes.js";

/**
 * The search a `/v1/search/<type>/<query>` path carries, read from the raw
 * URL so that an encoded `&` (`%26`) and a literal one stay apart.
 *
 * Two spellings reach this route:
 *
 * * the search language itself, URL-encoded: `brand:=Nike%20stock:>0`,
 *   `brand:="Bolt+%26+Nut"` (`+` and `%20` are both spaces);
 * * the form the official client builds with a query-string encoder and `=`
 *   turned into `:=`: `brand:=Probe&sku:=SDK-A`, `brand:=Bolt+%26+Nut`. Terms
 *   are joined by `&` and a value runs to the next `&`, spaces included.
 *
 * A path holding a literal `&` or an encoded `%26` is read as the second: in
 * the search language `&` means nothing, so either only comes from an encoder
 * that joined or escaped whole values. So is a path whose query string is the
 * same parameters (the official client sends them twice): without that, its
 * one-term search `title:=Seed+One` would read as `title:=Seed` and a keyword
 * `One`. Each term's value is then quoted for the parser. Anything else is the
 * search language as written.
 */

/** `field:<op>value`, the operator as the lexer knows it. */
const TERM = /^([^\s:"()]+):(-=|!=|>=|<=|=|>|<|-)?(.*)$/s;

function decodePart(raw: string, whole: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    throw new HttpError(400, `the search path ${JSON.stringify(whole)} has a broken %-escape in ${JSON.stringify(raw)}: encode % as %25`);
  }
}

function quote(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** One `&`-separated term as the parser should read it. */
function formTerm(term: string): string {
  const match = TERM.exec(term.trim());
  if (!match) return term.trim() === "" ? "" : quote(term.trim());
  const [, field = "", op = "", value = ""] = match;
  const v = value.trim();
  const alreadyQuoted = v.length >= 2 && v.startsWith('"') && v.endsWith('"');
  const needsQuotes = !alreadyQuoted && /[\s()"]/.test(v);
  return `${field}:${op}${needsQuotes ? quote(v) : v}`;
}

/** Is the raw path segment in the client's `&`-joined form. */
export function isFormStyle(raw: string): boolean {
  return raw.includes("&") || /%26/i.test(raw);
}

/** Does the query string repeat the path's terms as `field=value`, as the official client's search does. */
export function repeatsPath(raw: string, rawQuery: string): boolean {
  return raw !== "" && rawQuery.replace(/=/g, ":=") === raw;
}

/**
 * The search expression a raw (still encoded) path segment stands for; empty
 * for the listing without a query. `rawQuery` is the URL's query string, which
 * tells the official client's one-term searches apart.
 */
export function searchFromPath(raw: string, rawQuery = ""): string {
  if (!isFormStyle(raw) && !repeatsPath(raw, rawQuery)) return decodePart(raw, raw);
  return raw
    .split("&")
    .map((part) => formTerm(decodePart(part, raw)))
    .filter((t) => t !== "")
    .join(" ");
}

/** The search of a `/v1/search/<type>` request, read from its raw URL. */
export function searchFromUrl(url: string, prefix: string): string {
  const at = url.indexOf("?");
  return searchFromPath(rawPathAfter(url, prefix), at < 0 ? "" : url.slice(at + 1));
}

/** The raw segment after `prefix` in the request's URL, before any `?`. */
export function rawPathAfter(url: string, prefix: string): string {
  const path = url.split("?")[0] ?? "";
  return path.length > prefix.length ? path.slice(prefix.length).replace(/^\/+/, "") : "";
}
