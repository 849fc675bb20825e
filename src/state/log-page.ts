/**
 * A page of log records: consecutive records of one run stored as one row,
 * field by field. A run's records repeat most of their fields (account, run,
 * integration, operation, message, the second they were written in), so a
 * field the whole page shares is stored once, a field that changes seldom
 * as runs of equal values, and ids that count up (`<prefix><n>`, as LogWriter
 * makes them) as their prefix and first number. One row per record, with
 * its indexes, was most of an export's commit.
 *
 * A record that is not exactly a LogRecord (a field missing, or one more)
 * is kept whole beside the columns and read back as it was given.
 *
 * @module
 */

import type { LogBatch, LogColumns, LogRecord } from "./types.js";

/** The fields of a log record in the order LogWriter builds them, and records are read back in. */
const FIELDS = [
  "id", "action", "channel_id", "context", "field_data", "identifier", "job_id", "integration", "message", "method", "operation",
  "request_id", "result", "sd_user_id", "timestamp", "type", "instance", "log_level", "sd_acct_id",
] as const satisfies ReadonlyArray<keyof LogRecord>;

type Value = string | number;
type Field = (typeof FIELDS)[number];

/**
 * Each field read through a function of its own: a property read by a name
 * that changes from one read to the next is a slow (megamorphic) lookup, and
 * a page of records makes nineteen reads a record.
 */
const GETTERS: Readonly<Record<Field, (r: LogRecord) => Value | undefined>> = {
  id: (r) => r.id, action: (r) => r.action, channel_id: (r) => r.channel_id, context: (r) => r.context, field_data: (r) => r.field_data,
  identifier: (r) => r.identifier, job_id: (r) => r.job_id, integration: (r) => r.integration, message: (r) => r.message, method: (r) => r.method,
  operation: (r) => r.operation, request_id: (r) => r.request_id, result: (r) => r.result, sd_user_id: (r) => r.sd_user_id,
  timestamp: (r) => r.timestamp, type: (r) => r.type, instance: (r) => r.instance, log_level: (r) => r.log_level, sd_acct_id: (r) => r.sd_acct_id,
};
const FIELD_GETTERS = FIELDS.map((f) => GETTERS[f]);

/** One field of a page: the same on every record, runs of equal values, every value, or ids counting up. */
interface PageBody {
  n: number;
  same?: Record<string, Value>;
  runs?: Record<string, Value[]>;
  all?: Record<string, Value[]>;
  /** The ids: `[prefix, first number]`, record i's id being prefix + (first + i). */
  seq?: [string, number];
  /** Records kept whole, by their index in the page. */
  whole?: Record<string, string>;
}

/** An id as a prefix and the number it ends with, when that number is written plainly (no leading zero, a safe integer). */
export function idSequence(id: string): { prefix: string; number: number } | null {
  const m = /^(.*?)(0|[1-9]\d{0,14})$/.exec(id);
  if (!m || (m[1] ?? "").match(/\d$/)) return null;
  return { prefix: m[1] ?? "", number: Number(m[2]) };
}

/** The timestamp as the seed's search compares it: `YYYY-MM-DD HH:MM:SS`. */
export function searchTime(timestamp: string): string {
  return timestamp.replace("T", " ").slice(0, 19);
}

/** Records per page at most: a search by identifier decodes a whole page to read one record of it. */
export const LOG_PAGE_RECORDS = 1000;

/** Where each page of `records` ends: at LOG_PAGE_RECORDS, and wherever the job_id changes. */
export function pageEnds(records: readonly LogRecord[]): number[] {
  const ends: number[] = [];
  let from = 0;
  for (let i = 1; i <= records.length; i++) {
    if (i === records.length || i - from >= LOG_PAGE_RECORDS || records[i]?.job_id !== records[from]?.job_id) {
      ends.push(i);
      from = i;
    }
  }
  return ends;
}

/** What a store indexes and filters a page by, beside its body. */
export interface EncodedPage {
  body: string;
  count: number;
  job_id: string;
  /** The ids as a sequence (prefix and first number), or null when they are not one. */
  idPrefix: string | null;
  idFrom: number;
  /** Raw timestamps' range (retention compares them) and the search times' range (timestamp searches). */
  timeMin: string;
  timeMax: string;
  searchMin: string;
  searchMax: string;
  /**
   * Distinct lookup keys: `i` + identifier (unless `identifiers` covers them),
   * `r` + request_id, and `e` + id when the ids are no sequence.
   */
  keys: string[];
  /** The page's identifier keys as one range, first and last, when its identifiers come in order (identifierRange). */
  identifiers: { min: string; max: string } | null;
}

function isPlain(record: LogRecord): boolean {
  // Own enumerable keys, in order: what a for-in filtered by hasOwn gives, from V8's cache of the keys of the record's shape.
  const keys = Object.keys(record);
  if (keys.length !== FIELDS.length) return false;
  for (let f = 0; f < keys.length; f++) {
    if (keys[f] !== FIELDS[f]) return false;
    const value: unknown = (FIELD_GETTERS[f] as (r: LogRecord) => unknown)(record);
    if (typeof value !== "string" && typeof value !== "number") return false;
  }
  return true;
}

/** The ids of records[from..to) as one sequence, if they are one. */
function sequenceOf(records: readonly LogRecord[], from: number, to: number): [string, number] | null {
  const first = idSequence(records[from]?.id ?? "");
  if (!first) return null;
  for (let i = from + 1; i < to; i++) if (records[i]?.id !== `${first.prefix}${first.number + (i - from)}`) return null;
  return first.number + (to - from - 1) <= Number.MAX_SAFE_INTEGER ? [first.prefix, first.number] : null;
}

/** Records from..to of one run as a page. The caller cuts pages so each holds one job_id. */
export function encodePage(records: readonly LogRecord[], from: number, to: number): EncodedPage {
  const n = to - from;
  const body: PageBody = { n };
  const whole: Record<string, string> = {};
  let anyWhole = false;
  for (let i = from; i < to; i++) {
    const r = records[i] as LogRecord;
    if (!isPlain(r)) {
      whole[i - from] = JSON.stringify(r);
      anyWhole = true;
    }
  }
  if (anyWhole) body.whole = whole;
  const seq = sequenceOf(records, from, to);
  if (seq) body.seq = seq;
  for (const field of FIELDS) {
    if (field === "id" && seq) continue;
    const get = GETTERS[field];
    putField(body, field, n, (i) => {
      const record = records[from + i];
      return (record ? get(record) : undefined) ?? "";
    });
  }
  const at = (i: number): LogRecord => records[from + i] as LogRecord;
  return encoded(body, seq, at(0).job_id, {
    identifier: (i) => at(i).identifier,
    request: (i) => at(i).request_id,
    id: seq ? null : (i) => at(i).id,
    timestamp: (i) => at(i).timestamp ?? "",
  });
}

/** The pages of a batch to add: records cut where pageEnds cuts them, or the one page given field by field. */
export function encodePages(logs: LogBatch): EncodedPage[] {
  if (!isRecords(logs)) return logs.count === 0 ? [] : [encodeColumns(logs)];
  const pages: EncodedPage[] = [];
  let from = 0;
  for (const to of pageEnds(logs)) {
    pages.push(encodePage(logs, from, to));
    from = to;
  }
  return pages;
}

function isRecords(logs: LogBatch): logs is readonly LogRecord[] {
  return Array.isArray(logs);
}

/** A page given field by field (LogColumns): the page `encodePage` makes of the records it stands for. */
export function encodeColumns(page: LogColumns): EncodedPage {
  const n = page.count;
  const body: PageBody = { n };
  const seq = columnSequence(page);
  if (seq) body.seq = seq;
  const id = (i: number): string => `${page.idPrefix}${page.idFrom + i}`;
  for (const field of FIELDS) {
    if (field === "id") {
      if (!seq) putField(body, field, n, id);
      continue;
    }
    const column: Value | ReadonlyArray<Value> = page.fields[field];
    if (typeof column === "string" || typeof column === "number") (body.same ??= {})[field] = column;
    else putField(body, field, n, (i) => column[i] ?? "");
  }
  const text = (field: "identifier" | "request_id" | "timestamp"): ((i: number) => string) => {
    const column = page.fields[field];
    return typeof column === "string" ? () => column : (i) => column[i] ?? "";
  };
  const jobId = page.fields.job_id;
  return encoded(body, seq, typeof jobId === "string" ? jobId : (jobId[0] ?? ""), {
    identifier: text("identifier"),
    request: text("request_id"),
    id: seq ? null : id,
    timestamp: text("timestamp"),
  });
}

/** The ids of a page of columns as `sequenceOf` takes them apart: a search parses an id the same way. */
function columnSequence(page: LogColumns): [string, number] | null {
  const parsed = idSequence(`${page.idPrefix}${page.idFrom}`);
  if (!parsed || parsed.number + page.count - 1 > Number.MAX_SAFE_INTEGER) return null;
  // A prefix that ends in a digit is read as part of the number: the ids are checked one by one, as sequenceOf does.
  if (parsed.prefix !== page.idPrefix || parsed.number !== page.idFrom) {
    for (let i = 1; i < page.count; i++) if (`${page.idPrefix}${page.idFrom + i}` !== `${parsed.prefix}${parsed.number + i}`) return null;
  }
  return [parsed.prefix, parsed.number];
}

/** One field of a page's records in its body: the same on every record, runs of equal values, or every value. */
function putField(body: PageBody, field: Field, n: number, valueAt: (i: number) => Value): void {
  // Runs are counted first: most fields are the same on the whole page, and need no array of its values.
  const first = valueAt(0);
  let runs = 1;
  let last = first;
  for (let i = 1; i < n; i++) {
    const v = valueAt(i);
    if (v !== last) {
      runs++;
      last = v;
    }
  }
  if (runs === 1) {
    (body.same ??= {})[field] = first;
    return;
  }
  const values: Value[] = new Array<Value>(n);
  for (let i = 0; i < n; i++) values[i] = valueAt(i);
  if (runs * 2 <= n) (body.runs ??= {})[field] = runLengths(values);
  else (body.all ??= {})[field] = values;
}

/** What each record of a page is looked up and filtered by. */
interface PageKeys {
  identifier(i: number): string;
  request(i: number): string;
  /** Null when the ids are a sequence, which the page's own columns index. */
  id: ((i: number) => string) | null;
  timestamp(i: number): string;
}

/**
 * Records from which a page's identifiers in order are kept as one range:
 * a search by identifier reads every range of the account, and a key for
 * each of a few records costs little.
 */
export const RANGE_MIN_RECORDS = 100;

/** A code unit from which JavaScript's order of strings is not the order of their UTF-8 bytes (SQLite's and PostgreSQL's "C"). */
const OUT_OF_BYTE_ORDER = /[\ud800-\uffff]/;

/**
 * The first and last identifier key of a page whose identifiers never go
 * down (an export of a catalogue by identifier, a feed sorted by SKU): one
 * range instead of a key a record, which were most of a million-row
 * export's log writes. Null for a page out of order, or holding a character
 * whose order the stores would see otherwise.
 */
export function identifierRange(n: number, identifier: (i: number) => string): { min: string; max: string } | null {
  if (n < RANGE_MIN_RECORDS) return null;
  let last = identifier(0);
  if (OUT_OF_BYTE_ORDER.test(last)) return null;
  for (let i = 1; i < n; i++) {
    const next = identifier(i);
    if (next < last || OUT_OF_BYTE_ORDER.test(next)) return null;
    last = next;
  }
  return { min: `i${identifier(0)}`, max: `i${last}` };
}

/** The page with its lookup keys and time ranges. */
function encoded(body: PageBody, seq: [string, number] | null, jobId: string, at: PageKeys): EncodedPage {
  const identifiers = identifierRange(body.n, at.identifier);
  const keys = new Set<string>();
  let timeMin = at.timestamp(0);
  let timeMax = timeMin;
  let searchMin = searchTime(timeMin);
  let searchMax = searchMin;
  for (let i = 0; i < body.n; i++) {
    if (!identifiers) keys.add(`i${at.identifier(i)}`);
    keys.add(`r${at.request(i)}`);
    if (at.id) keys.add(`e${at.id(i)}`);
    const t = at.timestamp(i);
    if (t !== timeMax || t !== timeMin) {
      if (t < timeMin) timeMin = t;
      if (t > timeMax) timeMax = t;
      const s = searchTime(t);
      if (s < searchMin) searchMin = s;
      if (s > searchMax) searchMax = s;
    }
  }
  return { body: JSON.stringify(body), count: body.n, job_id: jobId, idPrefix: seq?.[0] ?? null, idFrom: seq?.[1] ?? 0, timeMin, timeMax, searchMin, searchMax, keys: [...keys], identifiers };
}

/**
 * Every key a page of `records` may have been written with: its keys now,
 * and one for each identifier, as a page was keyed before identifier
 * ranges. Retention deletes them all, whichever version wrote the page.
 */
export function keysEver(records: readonly LogRecord[]): string[] {
  const keys = new Set(encodePage(records, 0, records.length).keys);
  for (const record of records) keys.add(`i${record.identifier}`);
  return [...keys];
}

/** `[value, count, value, count, …]` */
function runLengths(values: readonly Value[]): Value[] {
  const out: Value[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i + 1;
    while (j < values.length && values[j] === values[i]) j++;
    out.push(values[i] as Value, j - i);
    i = j;
  }
  return out;
}

function expandRuns(runs: readonly Value[], n: number): Value[] {
  const out: Value[] = new Array<Value>(n);
  let at = 0;
  for (let i = 0; i < runs.length; i += 2) {
    const value = runs[i] as Value;
    const count = runs[i + 1] as number;
    out.fill(value, at, at + count);
    at += count;
  }
  return out;
}

/** The page's records in the order they were written. */
export function decodePage(text: string): LogRecord[] {
  const body = JSON.parse(text) as PageBody;
  const n = body.n;
  const columns: Array<Value[] | null> = [];
  const same: Value[] = [];
  for (const field of FIELDS) {
    const runs = body.runs?.[field];
    columns.push(body.all?.[field] ?? (runs ? expandRuns(runs, n) : null));
    same.push(body.same?.[field] ?? "");
  }
  const out: LogRecord[] = new Array<LogRecord>(n);
  const [prefix, from] = body.seq ?? ["", 0];
  const at = (f: number, i: number): Value => columns[f]?.[i] ?? (same[f] as Value);
  for (let i = 0; i < n; i++) {
    const kept = body.whole?.[i];
    if (kept !== undefined) {
      out[i] = JSON.parse(kept) as LogRecord;
      continue;
    }
    out[i] = {
      id: body.seq ? `${prefix}${from + i}` : (at(0, i) as string),
      action: at(1, i) as string,
      channel_id: at(2, i) as string,
      context: at(3, i) as string,
      field_data: at(4, i) as string,
      identifier: at(5, i) as string,
      job_id: at(6, i) as string,
      integration: at(7, i) as string,
      message: at(8, i) as string,
      method: at(9, i) as string,
      operation: at(10, i) as string,
      request_id: at(11, i) as string,
      result: at(12, i) as string,
      sd_user_id: at(13, i) as string,
      timestamp: at(14, i) as string,
      type: at(15, i) as string,
      instance: at(16, i) as number,
      log_level: at(17, i) as number,
      sd_acct_id: at(18, i) as number,
    };
  }
  return out;
}
