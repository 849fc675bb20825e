/**
 * The parameters of a log search (v3 part 4.4, and v1's) as both servers
 * read them: the daemon API over its run records and the embedded service
 * over its own log table. Each server keeps its own columns and messages for
 * what only it checks; what they share is read here once.
 *
 * @module
 */

import type { FastifyRequest } from "fastify";
import { badRequest, fields, wholeNumber } from "./envelopes.js";

/** `timestamp_start` and `timestamp_end`: the seed's Y-m-d H:i:s. */
export const LOG_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * The parameters of a log search, each one text. The seed does not say
 * whether they travel in the query or the body: both are read, the body
 * wins. Each value is a text, a number or a boolean; anything else is
 * refused naming the field, since dropping it would widen the search
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

/** Where the page starts and how many records it holds: 20 by default, 50 at most. */
export function logPage(p: Record<string, string>): { start: number; records: number } {
  return {
    start: wholeNumber(p.start, "start", 0, Number.MAX_SAFE_INTEGER, 0),
    records: wholeNumber(p.records, "records", 1, 50, 20),
  };
}

/** A time window is given whole or not at all. */
export function requireTimestampPair(p: Record<string, string>): void {
  if ((p.timestamp_start === undefined) !== (p.timestamp_end === undefined)) throw badRequest("timestamp_start and timestamp_end are sent as a pair: give both");
}

/** `instance`: 0 or 2 and up (the seed's numbering has no instance 1). */
export function logInstance(value: string): number {
  const n = wholeNumber(value, "instance", 0, Number.MAX_SAFE_INTEGER, 0);
  if (n === 1) throw badRequest("instance is 0 or a number 2 or greater");
  return n;
}
