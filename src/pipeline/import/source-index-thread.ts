/**
 * The thread of a diff run's source index (source-index-read.ts): reads the
 * snapshot's count and fingerprints from the SQLite file on a connection of
 * its own, builds the index and moves its table to the run.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { SQLITE_CACHE_PRAGMA } from "../../memory.js";
import { sqliteSnapshotCount, sqliteSourcePages } from "../../state/sqlite-source-pages.js";
import type { SourceThreadAnswer, SourceThreadData } from "./source-index-read.js";
import { SourceIndex } from "./source-index.js";

const port = parentPort;
if (!port) throw new Error("source-index-thread runs as a worker thread");
const { file, key, limit } = workerData as SourceThreadData;
// An error here ends the thread with its "error" event, and the run reads the index itself.
const db = new Database(file, { readonly: true, fileMustExist: true });
try {
  db.pragma(SQLITE_CACHE_PRAGMA);
  const parts = (await SourceIndex.fromPages(sqliteSourcePages(db, key), sqliteSnapshotCount(db, key), () => false, limit)).parts();
  port.postMessage({ parts } satisfies SourceThreadAnswer, [parts.slots.buffer]);
} finally {
  db.close();
}
