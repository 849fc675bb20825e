import type pg from "pg";
import { inTransaction } from "./pg-connect.js";
import { collectLegacyLogs, pruneLegacyLogs } from "./pg-legacy-logs.js";
import { decodePage, encodePage, encodePages, keysEver, searchTime, type EncodedPage } from "./log-page.js";
import { collectPage, pageLookup } from "./log-lookup.js";
import { LogCollector, logFilter } from "./log-query.js";
import type { LogBatch, LogPage, LogQuery } from "./types.js";

/** Pages read per query of a search: the first few usually answer it, a long search reads more each time. */
const FIRST_PAGES = 4;
const MOST_PAGES = 64;

/**
 * Pages and their keys in one statement: the pages' seqs are drawn first (in
 * order, so the pages keep the order of their records), and every column and
 * key goes as an array parameter.
 */
async function insertPages(client: pg.Pool | pg.PoolClient, account: string, pages: readonly EncodedPage[], seqs?: readonly number[]): Promise<void> {
  const keys: string[] = [];
  const keyPage: number[] = [];
  pages.forEach((page, i) => {
    for (const key of page.keys) {
      keys.push(key);
      keyPage.push(i + 1);
    }
  });
  const col = <T>(pick: (p: EncodedPage) => T): T[] => pages.map(pick);
  const drawn = seqs
    ? "SELECT o::integer AS o, s FROM unnest($11::bigint[]) WITH ORDINALITY AS d(s, o)"
    : "SELECT o, nextval(pg_get_serial_sequence('log_pages', 'seq')) AS s FROM generate_series(1, $11::integer) AS o";
  await client.query(
    `WITH d AS MATERIALIZED (${drawn}),
     p AS (INSERT INTO log_pages (seq, account, job_id, count, id_prefix, id_from, search_min, search_max, body, key_min, key_max)
       SELECT d.s, $1, u.job_id, u.count, u.id_prefix, u.id_from, u.search_min, u.search_max, u.body, u.key_min, u.key_max
       FROM unnest($2::text[], $3::integer[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $12::text[], $13::text[])
         WITH ORDINALITY AS u(job_id, count, id_prefix, id_from, search_min, search_max, body, key_min, key_max, o) JOIN d USING (o))
     INSERT INTO log_keys (account, key, page) SELECT $1, k.key, d.s FROM unnest($9::text[], $10::integer[]) AS k(key, o) JOIN d USING (o)`,
    [
      account,
      col((p) => p.job_id),
      col((p) => p.count),
      col((p) => p.idPrefix),
      col((p) => p.idFrom),
      col((p) => p.searchMin),
      col((p) => p.searchMax),
      col((p) => p.body),
      keys,
      keyPage,
      seqs ?? pages.length,
      col((p) => p.identifiers?.min ?? null),
      col((p) => p.identifiers?.max ?? null),
    ],
  );
}

/** Log records as pages (log-page.ts): one statement per batch. */
export async function insertLogs(pool: pg.Pool, account: string, logs: LogBatch): Promise<void> {
  const pages = encodePages(logs);
  if (pages.length > 0) await insertPages(pool, account, pages);
}

/** The WHERE clause of the pages that may hold matches, and its parameters. */
function pageWhere(query: LogQuery): { where: string[]; args: unknown[] } {
  const lookup = pageLookup(query);
  const args: unknown[] = [];
  const p = (value: unknown): string => {
    args.push(value);
    return `$${args.length}`;
  };
  const where: string[] = [];
  if (lookup.account !== undefined) where.push(`account = ${p(lookup.account)}`);
  if (lookup.keys && lookup.account !== undefined) {
    const account = p(lookup.account);
    let pages = `SELECT page FROM log_keys WHERE account = ${account} AND key = ANY(${p(lookup.keys)}::text[])`;
    if (lookup.rangeKeys) {
      // The pages whose identifier range covers a key, compared byte by byte as the ranges were made (log-page.ts).
      pages += ` UNION ALL SELECT r.seq FROM unnest(${p(lookup.rangeKeys)}::text[]) AS k(key) JOIN log_pages AS r ON r.account = ${account} AND r.key_min <= k.key COLLATE "C" AND r.key_max >= k.key COLLATE "C"`;
    }
    if (lookup.idIn) {
      // The pages whose id sequence covers the id, through their own index.
      const n = p(lookup.idIn.number);
      pages += ` UNION ALL SELECT seq FROM log_pages WHERE account = ${account} AND id_prefix = ${p(lookup.idIn.prefix)} AND id_from <= ${n}::bigint AND id_from + count > ${n}::bigint`;
    }
    where.push(`seq IN (${pages})`);
  }
  if (lookup.jobId !== undefined) where.push(`job_id = ${p(lookup.jobId)}`);
  if (lookup.time) where.push(`search_max >= ${p(lookup.time.from)} AND search_min <= ${p(lookup.time.to)}`);
  return { where, args };
}

/** Newest first, as the SQLite store answers (sqlite-logs.ts), then the rows of older versions. */
export async function searchLogs(pool: pg.Pool, query: LogQuery): Promise<LogPage> {
  const matches = logFilter(query);
  const collector = new LogCollector(query);
  const { where, args } = pageWhere(query);
  let below: number | null = null;
  let chunk = FIRST_PAGES;
  for (;;) {
    const conditions: string[] = below === null ? where : [...where, `seq < $${args.length + 1}`];
    const sql: string = `SELECT seq, body FROM log_pages ${conditions.length ? `WHERE ${conditions.join(" AND ")}` : ""} ORDER BY seq DESC LIMIT ${chunk}`;
    const { rows }: { rows: Array<{ seq: string; body: string }> } = await pool.query<{ seq: string; body: string }>(sql, below === null ? args : [...args, below]);
    for (const row of rows) if (!collectPage(row.body, matches, collector)) return collector.page();
    if (rows.length < chunk) break;
    below = Number(rows[rows.length - 1]?.seq);
    chunk = Math.min(MOST_PAGES, chunk * 4);
  }
  await collectLegacyLogs(pool, query, collector);
  return collector.page();
}

/**
 * Retention: deletes the records timestamped before `before` by their search
 * time, as the rows of older versions were: whole pages, and the older
 * records of a page that spans the moment (its newer ones are written back
 * under the same seq, so they keep their place).
 */
export async function pruneLogs(pool: pg.Pool, before: string): Promise<void> {
  const cutoff = searchTime(before);
  await pruneLegacyLogs(pool, cutoff);
  await inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ seq: string; account: string; body: string }>(
      "DELETE FROM log_pages WHERE search_min < $1 RETURNING seq, account, body",
      [cutoff],
    );
    for (const row of rows) {
      const records = decodePage(row.body);
      await client.query("DELETE FROM log_keys WHERE account = $1 AND key = ANY($2::text[]) AND page = $3", [row.account, keysEver(records), row.seq]);
      const kept = records.filter((r) => !(searchTime(r.timestamp) < cutoff));
      if (kept.length > 0) await insertPages(client, row.account, [encodePage(kept, 0, kept.length)], [Number(row.seq)]);
    }
  });
}
