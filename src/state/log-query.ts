import type { LogPage, LogQuery, LogRecord } from "./types.js";

/** v3 part 8: `found` is capped at 1001. */
export const LOG_FOUND_CAP = 1001;

/**
 * The seed's log search (v3 part 4.4): search fields narrow the results; the
 * refining fields (action, method, type, result, job_id, channel_id,
 * operation) count only when used together with a search field.
 */
export function logFilter(query: LogQuery): (record: LogRecord) => boolean {
  const tests: Array<(r: LogRecord) => boolean> = [];
  const anyOf = (values: string[] | undefined, pick: (r: LogRecord) => string): void => {
    if (values && values.length) {
      const set = new Set(values);
      tests.push((r) => set.has(pick(r)));
    }
  };
  if (query.run) tests.push((r) => r.job_id === query.run);
  anyOf(query.identifier, (r) => r.identifier);
  anyOf(query.context, (r) => r.context);
  anyOf(query.integration, (r) => r.integration);
  if (query.instance !== undefined) tests.push((r) => r.instance === query.instance);
  if (query.request_id) tests.push((r) => r.request_id === query.request_id);
  if (query.id) tests.push((r) => r.id === query.id);
  if (query.timestamp_start && query.timestamp_end) {
    const from = query.timestamp_start;
    const to = query.timestamp_end;
    tests.push((r) => {
      const t = r.timestamp.replace("T", " ").slice(0, 19);
      return t >= from && t <= to;
    });
  }
  if (tests.length > 0) {
    const refine: Array<[string | undefined, (r: LogRecord) => string]> = [
      [query.channel_id, (r) => r.channel_id],
      [query.action, (r) => r.action],
      [query.operation, (r) => r.operation],
      [query.method, (r) => r.method],
      [query.type, (r) => r.type],
      [query.result, (r) => r.result],
      [query.job_id, (r) => r.job_id],
    ];
    for (const [value, pick] of refine) if (value) tests.push((r) => pick(r) === value);
  }
  return (record) => tests.every((t) => t(record));
}

/**
 * The page of a search from its matches, newest first: `found` counts at
 * most one past the cap (so `found_more_logs` needs no full count), and the
 * page lies within those counted matches.
 */
export class LogCollector {
  private found = 0;
  private readonly logs: LogRecord[] = [];
  private readonly start: number;
  private readonly limit: number;

  constructor(query: LogQuery) {
    this.start = query.start ?? 0;
    this.limit = query.records ?? 20;
  }

  /** Counts a match; false once no further match can change the answer. */
  add(record: LogRecord): boolean {
    if (this.found >= this.start && this.logs.length < this.limit) this.logs.push(record);
    this.found++;
    return this.found <= LOG_FOUND_CAP;
  }

  get done(): boolean {
    return this.found > LOG_FOUND_CAP;
  }

  /** How many matches were counted so far. */
  get counted(): number {
    return this.found;
  }

  /**
   * For a reader that counts apart from fetching (pg-legacy-logs.ts): how
   * many of its next matches to pass over before the page, and how many the
   * page still takes.
   */
  window(): { skip: number; take: number } {
    return { skip: Math.max(0, Math.floor(this.start) - this.found), take: Math.max(0, this.limit - this.logs.length) };
  }

  /** `count` matches counted by such a reader, `records` the ones of them in the page. */
  addCounted(records: readonly LogRecord[], count: number): void {
    this.logs.push(...records);
    this.found += count;
  }

  page(): LogPage {
    return { found: Math.min(this.found, LOG_FOUND_CAP), found_more_logs: this.found > LOG_FOUND_CAP, logs: this.logs };
  }
}
