import v8 from "node:v8";

/**
 * Memory settings of the worker process, in one place: a run must stay under
 * 300 MB whatever the size of its file, and must not spend its time in
 * garbage collection to get there.
 */

/**
 * How far V8 may grow the heap past what survived the last full collection.
 *
 * A run allocates fast and keeps little, but V8 answers the allocation rate
 * by growing the heap to several times the live data. Capping the growth at
 * 1.5× keeps the peak RSS of a large import well under the budget for a
 * small share of its throughput in extra collections (the figures are in
 * the commit that set it and in `npm run bench:import`). The flag is read
 * each time V8 sizes the heap after a collection, so setting it at start-up,
 * before the first run, takes effect.
 */
const HEAP_GROWING_PERCENT = 50;

/**
 * V8 allocates straight into the old generation the objects of an
 * allocation site whose objects it saw survive young collections. A run's
 * records do survive one (a page of them lives until it is planned), so
 * V8 soon put every record there, and the old generation filled with
 * records dead a moment later, so a large diff run spent much of its time in
 * full collections; without pretenuring they are a handful, at the same peak
 * RSS. Like the growth cap, read at each decision, so setting it at start-up
 * takes effect.
 */
const PRETENURING = "--no-allocation-site-pretenuring";

/**
 * Node 24's V8 grows the young generation (new space) far larger than Node
 * 20's did under a run's allocation rate, which raised every run's peak RSS
 * without making it faster. Keeping the new space at its starting size holds
 * it where it was. Unlike `--max-semi-space-size`, which V8 reads only when
 * the heap is made, the growth factor is read at each decision, so it takes
 * effect when set at start-up.
 */
const NEW_SPACE_GROWTH = "--semi-space-growth-factor=1";

/**
 * When V8 starts marking the old generation for a full collection: at once,
 * when the old generation holds this share (in percent) of its limit, or
 * the heap with external memory of the global limit. V8's own rule starts it
 * by a task once less than a new space's size is left, about as early in a
 * small heap, but in a diff run, whose source index arrives as tens of
 * megabytes of external memory while the feed is read, the new space grew
 * far past its size in some runs meanwhile, and the old generation with it:
 * the peak RSS of a diff run moved widely from one run to the next (the
 * figures are in the commit and the README). It costs a large export a
 * higher peak, under that export's own limit (the README has both). Read at
 * each decision, like the two above.
 */
const MARKING_TRIGGER = "--incremental-marking-hard-trigger=50";

/**
 * What the `conveyor` command sets in the environment Node.js starts with: its
 * shebang line, `npm start` and the hand-over to the bundled runtime (cli.ts).
 *
 * glibc's malloc gives a thread that finds the arenas in use an arena of its
 * own, up to eight a core, and an arena keeps what was freed in it. A run has
 * a dozen threads (libuv's pool, V8's compiler and collector threads, the
 * writer threads), and their arenas held tens of megabytes freed long before.
 * Two arenas keep that down at no measured cost in speed. glibc reads the
 * setting when the process starts, so it cannot be set from inside a run.
 */
export const MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };

/** The CLI calls this once at start-up, before any run. */
export function tuneHeap(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  v8.setFlagsFromString(PRETENURING);
  v8.setFlagsFromString(NEW_SPACE_GROWTH);
  v8.setFlagsFromString(MARKING_TRIGGER);
}

/**
 * The page cache of each SQLite connection (state, work database, embedded
 * service). better-sqlite3 builds SQLite with 16 MB a connection; a run holds
 * three or four connections that each fill it, a large part of the peak RSS
 * of a big diff run, with no measurable gain in speed over 2 MB: the
 * operating system caches the files too.
 */
export const SQLITE_CACHE_PRAGMA = "cache_size = -2000";

/**
 * A string of its own, for one kept past the text it came from. A value cut
 * from a feed is a slice of the decoded text, and a slice keeps the whole
 * piece it was cut from (up to 64 KB) alive; a text joined from such slices
 * keeps every one. V8 copies substrings shorter than 13 characters anyway.
 */
export function ownCopy(text: string): string {
  // The concatenation is flattened into a new string of its own when sliced: a quarter of a JSON round trip's cost.
  return text.length < 13 ? text : ` ${text}`.slice(1);
}
