/**
 * What the pass and its render thread say to each other (render-thread.ts,
 * threaded-render.ts): a module of types alone, so the thread loads nothing
 * of the main side.
 *
 * @module
 */

import type { RowBatch } from "./row-batch.js";

export interface RenderThreadData {
  localPath: string;
  columns: readonly string[];
  delimiter: string;
  enclosure: string;
  stagePath: string;
}

/** `rows`: which of the pass's rows the batch holds ("rows 1001–2000"), so a failure names them. */
export type ToRenderThread = { type: "batch"; batch: RowBatch; rows: string } | { type: "finish" } | { type: "abort" };

export type FromRenderThread =
  | { type: "done" }
  | { type: "finished"; rows: number; bytes: number; staged: number }
  | { type: "aborted" }
  | { type: "failed"; message: string };
