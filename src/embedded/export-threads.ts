/**
 * An export of every item's named fields, read and rendered by several
 * threads at once: SQLite reading fields out of each item's JSON was most of
 * a large export job, on one core. The ids from `first` to `end` are cut
 * into pages of PAGE_IDS ids; thread k of n takes pages k, k + n, k + 2n…
 * (export-thread.ts), and the pages are written in order, so the file is
 * byte for byte the one the job writes alone. Each thread runs at most
 * AHEAD pages ahead of the file, so memory stays bounded.
 *
 * @module
 */

import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { startThread } from "../thread.js";

const PAGE_IDS = 250;
const AHEAD = 8;
const MAX_THREADS = 2;

export interface ExportThreadData {
  db: string;
  columns: readonly string[];
  first: number;
  /** Past the last id. */
  end: number;
  step: number;
  index: number;
  every: number;
  ahead: number;
}

/** A page's lines, from a thread. */
export interface ExportPage {
  page: number;
  rows: number;
  bytes: Uint8Array;
}

/** How many threads an export of `ids` ids takes: none below `from` ids, or on a single core. */
export function exportThreads(ids: number, from: number): number {
  const cores = Math.min(MAX_THREADS, availableParallelism());
  return ids < from || cores < 2 ? 0 : Math.min(cores, Math.ceil(ids / PAGE_IDS));
}

/** Writes the lines of the items with ids in [first, end) to `out` through `threads` threads; returns the rows written. */
export async function writeInThreads(out: WriteStream, job: { db: string; columns: readonly string[]; first: number; end: number; threads: number }): Promise<number> {
  const pages = Math.ceil((job.end - job.first) / PAGE_IDS);
  if (pages <= 0) return 0;
  const started: Worker[] = [];
  try {
    return await new Promise<number>((resolve, reject) => {
      const ready = new Map<number, { page: ExportPage; from: Worker }>();
      let next = 0;
      let rows = 0;
      let writing = false;
      // Writes the pages that came in order; one writer at a time, each page acknowledged once written.
      const pump = async (): Promise<void> => {
        if (writing) return;
        writing = true;
        try {
          for (let got = ready.get(next); got; got = ready.get(next)) {
            ready.delete(next++);
            rows += got.page.rows;
            if (!out.write(got.page.bytes)) await once(out, "drain");
            if (next < pages) got.from.postMessage("written");
          }
          if (next === pages) resolve(rows);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        } finally {
          writing = false;
        }
      };
      for (let index = 0; index < job.threads; index++) {
        const data: ExportThreadData = { db: job.db, columns: job.columns, first: job.first, end: job.end, step: PAGE_IDS, index, every: job.threads, ahead: AHEAD };
        const thread = startThread("export-thread", import.meta.url, data);
        started.push(thread);
        thread.on("message", (page: ExportPage) => {
          ready.set(page.page, { page, from: thread });
          void pump();
        });
        thread.on("error", reject);
        // Once the pages are written, the threads are stopped and this rejects nothing.
        thread.on("exit", (code) => reject(new Error(`an export thread stopped before its pages were written (exit code ${code}); start the export again`)));
      }
    });
  } finally {
    await Promise.all(started.map((thread) => thread.terminate()));
  }
}
