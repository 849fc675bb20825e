import v8 from "node:v8";

/**
 * Memory settings of the worker process, in one place: a run must stay under
 * 300 MB whatever the size of its file, and must not spend its time in
 * garbage collection to get there.
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

/**
 * V8 allocates straight into the old generation the objects of an
 * allocation site whose objects it saw survive young collections. A run's
 * records do survive one (a page of them lives until it is planned), so
 * V8 soon put every record there, and the old generation filled with
 * records dead a moment later: a million-row nightly diff run did sixty
 * full collections and spent a fifth of its time collecting. Without it:
 * nine full collections, CPU time 23.6 s -> 18.2 s (first-load debug run
 * 15.3 -> 12.9 s), peak RSS of the live load unchanged at 260 MB. Like the
 * growth cap, read at each decision, so setting it at start-up takes effect.
 */
const PRETENURING = "--no-allocation-site-pretenuring";

/** The CLI calls this once at start-up, before any run. */
export function tuneHeap(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString(PRETENURING);
}

/**
 * The page cache of each SQLite connection (state, work database, embedded
 * service). better-sqlite3 builds SQLite with 16 MB a connection; a run holds
 * three or four connections that each fill it, 45 MB of the peak RSS of a
 * million-row diff run, with no measurable gain in speed over 2 MB there: the
 * operating system caches the files too.
 */
export const SQLITE_CACHE_PRAGMA = "cache_size = -2000";
