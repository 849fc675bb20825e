import type Database from "better-sqlite3";
import { expandLogBody, type LogColumns } from "./log-body.js";
import type { LogQuery, LogRecord } from "./types.js";

/**
 * The log records written before log pages (log-page.ts): one row each in
 * table `logs`, with the compact body of log-body.ts. They are older than
 * every page, so a search reads them after the pages, and retention deletes
 * them by their timestamp until none are left.
 */
export class SqliteLegacyLogs {
  constructor(private readonly db: Database.Database) {}

  /** The rows the indexes find for the search, newest first; the caller filters each. */
  *records(query: LogQuery): Generator<LogRecord> {
    const { where, args } = indexedLogWhere(query);
    const sql = `SELECT account, id, identifier, job_id, request_id, timestamp, body FROM logs ${where} ORDER BY seq DESC`;
    const rows = this.db.prepare(sql).iterate(...args) as IterableIterator<LogColumns & { body: string }>;
    for (const row of rows) yield expandLogBody(row, row.body);
  }

  prune(before: string): void {
    this.db.prepare("DELETE FROM logs WHERE timestamp < ?").run(before);
  }
}

/**
 * The part of a log search the table's indexes answer (account, identifier,
 * job_id, request_id, id), so a narrow search reads its rows and not the
 * account's whole log; `logFilter` still decides every row (timestamps,
 * refining fields).
 */
function indexedLogWhere(query: LogQuery): { where: string; args: string[] } {
  const where: string[] = [];
  const args: string[] = [];
  const equals = (column: string, value: string | undefined): void => {
    if (!value) return;
    where.push(`${column} = ?`);
    args.push(value);
  };
  equals("account", query.account);
  equals("job_id", query.run);
  const identifiers = query.identifier ?? [];
  if (identifiers.length > 0) {
    where.push(`identifier IN (${identifiers.map(() => "?").join(", ")})`);
    args.push(...identifiers);
  }
  equals("request_id", query.request_id);
  equals("id", query.id);
  // job_id refines only next to a search field (logFilter); the identifier or request_id above is one.
  if (query.run || identifiers.length > 0 || query.request_id || query.id) equals("job_id", query.job_id);
  return { where: where.length ? `WHERE ${where.join(" AND ")}` : "", args };
}
