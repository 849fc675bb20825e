import type { FastifyRequest } from "fastify";
import { badRequest, fields } from "./envelopes.js";

/**
 * The parameters of a log search (v3 part 4.4, and v1's), each one text. The
 * seed does not say whether they travel in the query or the body: both are
 * read, the body wins. Each value is a text, a number or a boolean; anything
 * else is refused naming the field, since dropping it would widen the search
 * (`{"identifier": {"$ne": 1}}` once returned every record).
 */
export function logSearchParams(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [where, source] of [["query", fields(request.query)], ["body", fields(request.body)]] as const) {
    for (const [k, v] of Object.entries(source)) {
      if (v === undefined || v === null) continue;
      if (typeof v === "string") out[k] = v;
      else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
      else {
        const several = Array.isArray(v) && where === "query" ? `${k} is given ${v.length} times in the query; give it once` : `${k} must be a text or a number, not ${Array.isArray(v) ? "a list" : "an object"}`;
        throw badRequest(`log search field ${several}; several values of a field go in one text, comma separated ("${k}": "a,b")`);
      }
    }
  }
  return out;
}
