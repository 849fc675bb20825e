/**
 * Which log pages a search reads (log-page.ts), as both stores ask their
 * tables: the pages that hold a key the search names (an id, identifiers or
 * a request_id), of a run, or overlapping its time window, newest first.
 * `logFilter` still decides every record of the pages read, so the lookup
 * only has to find a superset of the pages that hold matches.
 *
 * @module
 */

import { decodePage, idSequence } from "./log-page.js";
import type { LogCollector } from "./log-query.js";
import type { LogQuery, LogRecord } from "./types.js";

export interface PageLookup {
  account?: string;
  /** Pages holding one of these keys (log_keys). */
  keys?: string[];
  /** Of them, the identifier keys, which a page may hold as a range instead (log_pages.key_min, key_max). */
  rangeKeys?: string[];
  /** Pages whose id sequence covers this one: the prefix and number of the id searched. */
  idIn?: { prefix: string; number: number };
  /** The page's job_id: the run searched, or job_id refining a search. */
  jobId?: string;
  /** Pages whose search times overlap this window. */
  time?: { from: string; to: string };
}

/** True when the search has a search field, so refining fields apply (logFilter). */
function searched(query: LogQuery): boolean {
  return Boolean(
    query.run || query.identifier?.length || query.context?.length || query.integration?.length || query.instance !== undefined || query.request_id || query.id || (query.timestamp_start && query.timestamp_end),
  );
}

export function pageLookup(query: LogQuery): PageLookup {
  const lookup: PageLookup = {};
  if (query.account) lookup.account = query.account;
  // The keys are per account: without one, the pages are read by the other conditions.
  if (query.account) {
    if (query.id) {
      lookup.keys = [`e${query.id}`];
      const seq = idSequence(query.id);
      if (seq) lookup.idIn = seq;
    } else if (query.identifier?.length) lookup.keys = lookup.rangeKeys = query.identifier.map((i) => `i${i}`);
    else if (query.request_id) lookup.keys = [`r${query.request_id}`];
  }
  if (query.run) lookup.jobId = query.run;
  // Beside a run, a job_id refinement is left to logFilter: the run's pages are a superset either way.
  else if (query.job_id && searched(query)) lookup.jobId = query.job_id;
  if (query.timestamp_start && query.timestamp_end) lookup.time = { from: query.timestamp_start, to: query.timestamp_end };
  return lookup;
}

/** Feeds a page's matching records to the collector, newest first; false once the collector is done. */
export function collectPage(body: string, matches: (r: LogRecord) => boolean, collector: LogCollector): boolean {
  const records = decodePage(body);
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i] as LogRecord;
    if (matches(r) && !collector.add(r)) return false;
  }
  return true;
}
