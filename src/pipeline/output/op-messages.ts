/**
 * What an OpWriter and its receiving end (the writer thread, or the op queue
 * in process) say to each other, apart from both so neither imports the other.
 *
 * @module
 */

import type { OpFilesOptions, OpFilesResult } from "./op-files.js";
import type { OpPage } from "./op-pages.js";

export type ToThread = { type: "page"; page: OpPage; secrets?: string[] } | { type: "finish" } | { type: "discard" };
export type FromThread = { type: "done" } | { type: "finished"; result: OpFilesResult } | { type: "discarded" } | { type: "failed"; message: string };

export interface OpThreadData {
  options: OpFilesOptions;
  secrets: string[];
}
