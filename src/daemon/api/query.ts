import type { FastifyRequest } from "fastify";
import { badRequest, fields, text, wholeNumber } from "../../http/envelopes.js";
import { checkRunFlags } from "./flags.js";

/** The query parameters a v3 listing accepts (seed part 7); anything else is a 400 that names it. */
export const LISTING_PARAMS = ["debug", "diff", "user_id", "page", "internal", "showFilters", "sort", "sortorder", "notify", "email", "type", "disableCache"] as const;

/** Items per listing page: the seed says "paginated" without a size; the v1 pages hold 50. */
export const PAGE_SIZE = 50;

/** Listing switches the seed names (part 7) without saying what they do: accepted, but only as a switch. */
const LISTING_SWITCHES = ["internal", "showFilters", "disableCache"] as const;
const SWITCH_VALUE = /^(?:0|1|true|false)$/i;

/** The query as one text per parameter; a parameter given twice is refused rather than read as its first value. */
export function query(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields(request.query))) {
    if (Array.isArray(v)) throw badRequest(`${k} is given ${v.length} times; give it once`);
    const t = text(v);
    if (t !== undefined) out[k] = t;
  }
  return out;
}

/**
 * 400 in the validation envelope, code 1, naming the rejected parameters and
 * the valid ones (part 7). The run flags a route accepts are checked here too,
 * so every route refuses `debug=maybe` alike, whether it acts on it or not.
 */
export function rejectUnknown(request: FastifyRequest, valid: readonly string[]): Record<string, string> {
  const q = query(request);
  const unknown = Object.keys(q).filter((k) => !valid.includes(k));
  if (unknown.length > 0) {
    throw badRequest(`unknown query parameter${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")}; valid parameters: ${valid.join(", ")}`);
  }
  checkRunFlags(request);
  for (const name of LISTING_SWITCHES) {
    const value = q[name];
    if (value !== undefined && value !== "" && !SWITCH_VALUE.test(value)) throw badRequest(`${name} must be 1, 0, true or false, not ${JSON.stringify(value)}`);
  }
  return q;
}

export function positiveInt(value: string | undefined, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  return wholeNumber(value, name, 1, max, fallback);
}

/** Path `id` is a number (part 4.2). */
export function pathId(request: FastifyRequest): number {
  const raw = text(fields(request.params).id) ?? "";
  if (!/^\d+$/.test(raw)) throw badRequest(`the automation id in the path must be a number, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** The seed's listing envelope: `count` as a string, `timestamp` ISO 8601 UTC, then the array. */
export function listing<T>(
  name: string,
  items: T[],
  q: Record<string, string>,
  sortable: Record<string, (item: T) => string | number | null>,
  now: Date,
): Record<string, unknown> {
  const page = positiveInt(q.page, "page", 1);
  const order = (q.sortorder ?? "asc").toLowerCase();
  if (order !== "asc" && order !== "desc") throw badRequest(`sortorder must be asc or desc, not ${JSON.stringify(q.sortorder)}`);
  const sorted = [...items];
  if (q.sort) {
    // Own keys only: `sort=__proto__` or `sort=constructor` would find Object's own members.
    const key = Object.hasOwn(sortable, q.sort) ? sortable[q.sort] : undefined;
    if (!key) throw badRequest(`sort must be one of ${Object.keys(sortable).join(", ")}, not ${JSON.stringify(q.sort)}`);
    sorted.sort((a, b) => {
      const x = key(a) ?? "";
      const y = key(b) ?? "";
      const cmp = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return order === "desc" ? -cmp : cmp;
    });
  } else if (order === "desc") sorted.reverse();
  return { count: String(items.length), timestamp: now.toISOString(), [name]: sorted.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE) };
}

/** `{id, results:{successful:[{code, message}]}}`: 1 created, 2 updated, 3 deleted or reset (part 2.1). */
export function mutation(id: number | string, code: 1 | 2 | 3, message: string): Record<string, unknown> {
  return { id, results: { successful: [{ code, message }] } };
}
