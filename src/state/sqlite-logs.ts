import type Database from "better-sqlite3";
import { compactLogBody, expandLogBody, type LogColumns } from "./log-body.js";
import { logFilter, LOG_FOUND_CAP } from "./log-query.js";
import type { LogPage, LogQuery, LogRecord } from "./types.js";

/**
 * The log records of the SQLite store: one row each, written a batch per
 * transaction through one prepared statement (a single `json_each`
 * statement per batch measured no faster: the table and its two indexes
 * are the cost, not the binding), with the compact body of log-body.ts.
 */
export class SqliteLogs {
  private readonly insert: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare("INSERT INTO logs (account, id, identifier, job_id, request_id, timestamp, body) VALUES (?, ?, ?, ?, ?, ?, ?)");
  }

  add(account: string, records: readonly LogRecord[]): void {
    this.db.transaction(() => {
      for (const r of records) this.insert.run(account, r.id, r.identifier, r.job_id, r.request_id, r.timestamp, compactLogBody(r, account));
    })();
  }

  search(query: LogQuery): LogPage {
    const matches = logFilter(query);
    const start = query.start ?? 0;
    const limit = query.records ?? 20;
    const logs: LogRecord[] = [];
    let found = 0;
    const { where, args } = indexedLogWhere(query);
    const sql = `SELECT account, id, identifier, job_id, request_id, timestamp, body FROM logs ${where} ORDER BY seq DESC`;
    const rows = this.db.prepare(sql).iterate(...args) as IterableIterator<LogColumns & { body: string }>;
    for (const row of rows) {
      const record = expandLogBody(row, row.body);
      if (!matches(record)) continue;
      if (found >= start && logs.length < limit) logs.push(record);
      found++;
      // One past the cap tells whether more exist without counting them all.
      if (found > LOG_FOUND_CAP) break;
    }
    return { found: Math.min(found, LOG_FOUND_CAP), found_more_logs: found > LOG_FOUND_CAP, logs };
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
