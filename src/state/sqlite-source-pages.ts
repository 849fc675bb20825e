/**
 * The SQLite store's reads of a snapshot's count and source fingerprints,
 * shared by the store and by the thread that builds a diff run's source index
 * from the same file (source-index-thread.ts), and how the store finds a
 * snapshot's entries by its key.
 *
 * @module
 */

import type Database from "better-sqlite3";

/**
 * The number a snapshot key's entries are stored under, its key the
 * statement's parameter. Entries are kept as (kid, identifier, values,
 * updated in milliseconds, source), not under their key's text, which
 * every row of a large snapshot would repeat.
 */
export const SNAPSHOT_KID = "(SELECT kid FROM snapshot_keys WHERE key = ?)";

/** Every entry of `key` as identifier and source fingerprint, in pages in identifier order. */
export function* sqliteSourcePages(db: Database.Database, key: string, pageSize = 1000): Generator<Array<[string, string | null]>> {
  // Keyset pages along the primary key: no statement stays open while the caller awaits between pages.
  const page = db.prepare(`SELECT identifier, source FROM snapshot_entries WHERE kid = ${SNAPSHOT_KID} AND identifier > ? ORDER BY identifier LIMIT ?`).raw();
  let after = "";
  for (;;) {
    const rows = page.all(key, after, pageSize) as Array<[string, string | null]>;
    if (rows.length === 0) return;
    after = rows[rows.length - 1]?.[0] ?? after;
    yield rows;
    if (rows.length < pageSize) return;
  }
}

/** How many entries `key` has: SQLite keeps no count, so this reads every page of them. */
export function sqliteSnapshotCount(db: Database.Database, key: string): number {
  return db.prepare(`SELECT count(*) FROM snapshot_entries WHERE kid = ${SNAPSHOT_KID}`).pluck().get(key) as number;
}
