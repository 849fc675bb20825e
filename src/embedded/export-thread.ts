/**
 * A thread of a threaded export (export-threads.ts): reads its share of the
 * pages of a range of item ids, every `every`th from `index` on, renders
 * each as CSV lines and posts it as bytes, moving the buffer rather than
 * copying it. It runs at most `ahead` pages ahead of the file: each page the
 * main thread has written gives it room for one more.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { cellsLine } from "./csv-lines.js";
import { ItemStore } from "./item-store.js";
import type { ExportPage, ExportThreadData } from "./export-threads.js";

const port = parentPort;
if (!port) throw new Error("export-thread runs as a worker thread");
const data = workerData as ExportThreadData;

const db = new Database(data.db, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 5000");
const range = new ItemStore(db).fieldRanges(data.columns);
if (!range) throw new Error(`these columns are not read by ranges: ${data.columns.join(", ")}`);

let room = data.ahead;
let wake: (() => void) | null = null;
port.on("message", () => {
  room++;
  wake?.();
});

const encoder = new TextEncoder();
for (let page = data.index; data.first + page * data.step < data.end; page += data.every) {
  while (room === 0) await new Promise<void>((resolve) => (wake = resolve));
  wake = null;
  const from = data.first + page * data.step;
  const rows = range(from, Math.min(from + data.step, data.end));
  let text = "";
  for (const cells of rows) text += cellsLine(cells);
  const bytes = encoder.encode(text);
  room--;
  const msg: ExportPage = { page, rows: rows.length, bytes };
  port.postMessage(msg, [bytes.buffer]);
}
db.close();
