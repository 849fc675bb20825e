import v8 from "node:v8";

/**
 * Memory limits of the worker process, in one place: a run must stay under
 * 300 MB whatever the size of its file.
 */

/**
 * How far V8 may grow the heap past what survived the last full collection.
 *
 * A run allocates fast and keeps little: a million-row import holds about
 * 60 MB of live data, but V8 answers the allocation rate by growing the heap
 * up to four times that, and the process peaked at 350 MB. Capping the
 * growth at 1.5× keeps the peak at about 230 MB for the same run, for about
 * a tenth of its throughput in extra collections (bench/import.ts, the
 * first-load debug run: 23.8 s → 27.0 s, 353 → 231 MB). The flag is
 * read each time V8 sizes the heap after a collection, so setting it at
 * start-up, before the first run, takes effect.
 */
const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/**
 * The page cache of each SQLite connection (state, work database, embedded
 * service). better-sqlite3 builds SQLite with 16 MB a connection; a run holds
 * three or four connections that each fill it, 45 MB of the peak RSS of a
 * million-row diff run, with no measurable gain in speed over 2 MB there: the
 * operating system caches the files too.
 */
export const SQLITE_CACHE_PRAGMA = "cache_size = -2000";
