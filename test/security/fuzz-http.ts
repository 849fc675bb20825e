import fc from "fast-check";
import { createLogger, type Logger } from "../../src/log.js";
import { FuzzTally, junk, oddKey, oddString, type Json } from "./fuzz-inputs.js";

/**
 * Sending generated requests over HTTP for the API fuzz tests: a request is a
 * method, a path, a query and a body (JSON, raw text or a form). Every answer
 * must be below 500; a 500 is recorded with its input, so one run lists every
 * route that broke rather than stopping at the first.
 */

export interface FuzzRequest {
  route: string;
  method: string;
  path: string;
  query?: Record<string, string | string[]>;
  body?: { json: Json } | { raw: string; type: string } | { form: Record<string, string> } | { multipart: Record<string, string>; file?: { field: string; name: string; content: string } };
}

/** Query values as a client sends them: odd strings, sometimes a key repeated. */
export function queryOf(keys: readonly string[]): fc.Arbitrary<Record<string, string | string[]>> {
  const value = fc.oneof({ weight: 4, arbitrary: oddString }, { weight: 1, arbitrary: fc.array(oddString, { minLength: 2, maxLength: 3 }) });
  return fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: oddKey }), value, { maxKeys: 4 });
}

/** A sort key as a client might name one: a real one, a prototype member, or anything. */
export function sortKey(real: readonly string[]): fc.Arbitrary<string> {
  const odd = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__proto___", "constructor_"];
  return fc.oneof(fc.constantFrom(...real), fc.constantFrom(...odd), oddString);
}

/** A body that is not the JSON its content type says, or not JSON at all. */
export const rawBody: fc.Arbitrary<{ raw: string; type: string }> = fc.record({
  raw: fc.oneof(oddString, junk(3).map((v) => JSON.stringify(v).slice(0, -1)), fc.constantFrom("{", "[", '{"a":', "nul", "{}}", '{"__proto__":{"x":1}}')),
  type: fc.constantFrom("application/json", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1"),
});

/** `encodeURIComponent` refuses lone surrogates; a client would send them as replacement characters. */
export function wellFormed(value: string): string {
  return value.replace(/[\uD800-\uDFFF]/gu, "\uFFFD");
}

function encode(value: string): string {
  return encodeURIComponent(wellFormed(value));
}

/** One path segment as generated: never empty and never `.` or `..`, which URL parsing removes, so the request would reach another route. */
export function segment(value: string): string {
  if (value === "") return encode(" ");
  return /^\.{1,2}$/u.test(value) ? encode(`${value}~`) : encode(value);
}

function url(base: string, r: FuzzRequest): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(r.query ?? {})) for (const one of Array.isArray(v) ? v : [v]) pairs.push(`${encode(k)}=${encode(one)}`);
  return `${base}${r.path}${pairs.length ? `?${pairs.join("&")}` : ""}`;
}

export interface Sender {
  base: string;
  headers: Record<string, string>;
  tally: FuzzTally;
  /** Answers counted by route and status class, for the closing print. */
  statuses: Map<string, number>;
  /** The server's own account of its last 500, so a failure names its cause. */
  lastError?: () => string;
}

/** A logger that keeps the message of every error the server logs: a 500 answers only "see its log". */
export function errorCapture(): { logger: Logger; last: () => string } {
  const errors: string[] = [];
  const logger = createLogger({
    level: "error",
    destination: {
      write(line: string): void {
        const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        errors.push(`${entry.msg ?? ""}: ${entry.err?.message ?? ""}`);
      },
    },
  });
  return { logger, last: () => errors.at(-1) ?? "(nothing logged)" };
}

/** Sends one request; a status of 500 or more, or a dropped connection, is a failure. */
export async function send(s: Sender, r: FuzzRequest): Promise<number> {
  s.tally.inputs++;
  const headers: Record<string, string> = { ...s.headers };
  let body: string | URLSearchParams | FormData | undefined;
  if (r.body && "json" in r.body) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(r.body.json);
  } else if (r.body && "raw" in r.body) {
    headers["content-type"] = r.body.type;
    body = wellFormed(r.body.raw);
  } else if (r.body && "form" in r.body) {
    body = new URLSearchParams(Object.entries(r.body.form).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
  } else if (r.body && "multipart" in r.body) {
    const form = new FormData();
    for (const [k, v] of Object.entries(r.body.multipart)) form.append(wellFormed(k), wellFormed(v));
    if (r.body.file) form.append(wellFormed(r.body.file.field), new Blob([wellFormed(r.body.file.content)]), wellFormed(r.body.file.name));
    body = form;
  }
  let status: number;
  let text = "";
  try {
    const res = await fetch(url(s.base, r), { method: r.method, headers, ...(body === undefined ? {} : { body }) });
    status = res.status;
    text = await res.text();
  } catch (err) {
    status = 599;
    text = `connection failed: ${(err as Error).message}`;
  }
  const key = `${r.route} ${Math.floor(status / 100)}xx`;
  s.statuses.set(key, (s.statuses.get(key) ?? 0) + 1);
  if (status >= 500) s.tally.fail(`${r.method} ${r.path} -> ${status} (${s.lastError?.() ?? text.slice(0, 160)})`, { query: r.query, body: r.body });
  return status;
}

export function statusLines(statuses: Map<string, number>): string {
  return [...statuses.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `  ${k}: ${n}`)
    .join("\n");
}
