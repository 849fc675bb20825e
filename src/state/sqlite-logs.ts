import type Database from "better-sqlite3";
import { encodePage, encodePages, decodePage, keysEver, type EncodedPage } from "./log-page.js";
import { collectPage, pageLookup } from "./log-lookup.js";
import { LogCollector, logFilter } from "./log-query.js";
import { SqliteLegacyLogs } from "./sqlite-legacy-logs.js";
import type { LogBatch, LogPage, LogQuery } from "./types.js";

interface PageRow {
  seq: number;
  account: string;
  body: string;
}

/**
 * The log records of the SQLite store as pages (log-page.ts): one row in
 * `log_pages` per page, and one row in `log_keys` per identifier, request_id
 * and (when the ids are no sequence) id of a page, for the searches by them.
 * Records written one row each by an older version are read after the pages.
 */
export class SqliteLogs {
  private readonly insertPage: Database.Statement;
  private readonly insertKey: Database.Statement;
  private readonly legacy: SqliteLegacyLogs;

  constructor(private readonly db: Database.Database) {
    this.insertPage = db.prepare(
      `INSERT INTO log_pages (seq, account, job_id, count, id_prefix, id_from, time_min, time_max, search_min, search_max, key_min, key_max, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    // A page's keys go as one JSON parameter: binding one statement per key cost more than the index.
    this.insertKey = db.prepare("INSERT INTO log_keys (account, key, page) SELECT ?, value, ? FROM json_each(?)");
    this.legacy = new SqliteLegacyLogs(db);
  }

  add(account: string, logs: LogBatch): void {
    this.db.transaction(() => {
      for (const page of encodePages(logs)) this.put(account, null, page);
    })();
  }

  private put(account: string, seq: number | null, page: EncodedPage): void {
    const { lastInsertRowid } = this.insertPage.run(
      seq, account, page.job_id, page.count, page.idPrefix, page.idFrom, page.timeMin, page.timeMax, page.searchMin, page.searchMax,
      page.identifiers?.min ?? null, page.identifiers?.max ?? null, page.body,
    );
    this.insertKey.run(account, lastInsertRowid, JSON.stringify(page.keys));
  }

  search(query: LogQuery): LogPage {
    const matches = logFilter(query);
    const collector = new LogCollector(query);
    for (const row of this.pages(query)) if (!collectPage(row.body, matches, collector)) return collector.page();
    for (const record of this.legacy.records(query)) if (matches(record) && !collector.add(record)) break;
    return collector.page();
  }

  /** The pages that may hold matches, newest first. */
  private pages(query: LogQuery): IterableIterator<PageRow> {
    const lookup = pageLookup(query);
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (lookup.account !== undefined) {
      where.push("account = ?");
      args.push(lookup.account);
    }
    if (lookup.keys && lookup.account !== undefined) {
      let pages = `SELECT page FROM log_keys WHERE account = ? AND key IN (${lookup.keys.map(() => "?").join(", ")})`;
      args.push(lookup.account, ...lookup.keys);
      if (lookup.rangeKeys) {
        // The pages whose identifier range covers a key; CROSS JOIN: a range scan of the index for each key.
        pages += " UNION ALL SELECT p.seq FROM json_each(?) AS k CROSS JOIN log_pages AS p WHERE p.account = ? AND p.key_min <= k.value AND p.key_max >= k.value";
        args.push(JSON.stringify(lookup.rangeKeys), lookup.account);
      }
      if (lookup.idIn) {
        // The pages whose id sequence covers the id, through their own index.
        pages += " UNION ALL SELECT seq FROM log_pages WHERE account = ? AND id_prefix = ? AND id_from <= ? AND id_from + count > ?";
        args.push(lookup.account, lookup.idIn.prefix, lookup.idIn.number, lookup.idIn.number);
      }
      where.push(`seq IN (${pages})`);
    }
    if (lookup.jobId !== undefined) {
      where.push("job_id = ?");
      args.push(lookup.jobId);
    }
    if (lookup.time) {
      where.push("search_max >= ? AND search_min <= ?");
      args.push(lookup.time.from, lookup.time.to);
    }
    const sql = `SELECT seq, account, body FROM log_pages ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY seq DESC`;
    return this.db.prepare(sql).iterate(...args) as IterableIterator<PageRow>;
  }

  /**
   * Deletes the records timestamped before `before` (`YYYY-MM-DD HH:MM:SS`):
   * whole pages, and the older records of a page that spans the moment (its
   * newer ones are written back under the same seq, so they keep their place).
   */
  prune(before: string): void {
    this.legacy.prune(before);
    const old = this.db.prepare("SELECT seq, account, body FROM log_pages WHERE time_min < ?").all(before) as PageRow[];
    const deletePage = this.db.prepare("DELETE FROM log_pages WHERE seq = ?");
    const deleteKey = this.db.prepare("DELETE FROM log_keys WHERE account = ? AND key = ? AND page = ?");
    this.db.transaction(() => {
      for (const row of old) {
        const records = decodePage(row.body);
        for (const key of keysEver(records)) deleteKey.run(row.account, key, row.seq);
        deletePage.run(row.seq);
        const kept = records.filter((r) => !(r.timestamp < before));
        if (kept.length > 0) this.put(row.account, row.seq, encodePage(kept, 0, kept.length));
      }
    })();
  }
}
