/**
 * A diff run's source index, read while the pass opens (source-index.ts).
 * From a SQLite store the read runs on a thread of its own: it reads every
 * page of the snapshot, and on the main thread it held up what overlaps it,
 * the end of the download and the scope read. The thread moves the table to
 * the run when it is done; a thread that fails leaves the read to the main
 * thread, as a store without a file has it.
 *
 * @module
 */

import type { Worker } from "node:worker_threads";
import { startThread } from "../../thread.js";
import type { PassInput } from "./pass-driver.js";
import { fingerprintable } from "./source-fingerprint.js";
import { MAX_ENTRIES, SourceIndex, type SourceIndexParts } from "./source-index.js";

/** What the thread is given. */
export interface SourceThreadData {
  file: string;
  key: string;
  limit: number;
}

/** What the thread answers once it has read the index; a thread that fails answers nothing and exits. */
export interface SourceThreadAnswer {
  parts: SourceIndexParts;
}

/** A source index being read: the planner awaits `index` (null when the pass cannot settle rows); `stop` ends the read and lets the index go. */
export interface SourceIndexRead {
  readonly index: Promise<SourceIndex | null>;
  stop(): Promise<void>;
}

const NO_INDEX: SourceIndexRead = { index: Promise.resolve(null), stop: async () => undefined };

type ReadInput = Pick<PassInput, "config" | "diff" | "store" | "snapshotKey" | "signal">;

/**
 * Starts reading the index when the pass opens, so that it overlaps the
 * download and the scope read; only for a pass whose rows can be settled
 * (the conditions of ProductPlanner.settle and sourceFingerprints).
 */
export function startSourceIndex(input: ReadInput): SourceIndexRead {
  const { config } = input;
  const updates = config.update !== undefined && config.update !== true;
  const csv = config.format === undefined || config.format === "csv";
  if (!input.diff || !updates || config.diff_update || !csv || !fingerprintable(config)) return NO_INDEX;
  let stopped = false;
  const isStopped = (): boolean => stopped || input.signal?.aborted === true;
  let thread: Worker | undefined;
  const inProcess = (): Promise<SourceIndex> => SourceIndex.load(input.store, input.snapshotKey, isStopped);
  const file = input.store.localFile;
  let index: Promise<SourceIndex | null>;
  if (file === undefined) index = inProcess();
  else {
    thread = startThread("source-index-thread", import.meta.url, { file, key: input.snapshotKey, limit: MAX_ENTRIES } satisfies SourceThreadData);
    index = fromThread(thread).then((parts) => (parts ? SourceIndex.fromParts(parts) : isStopped() ? null : inProcess()));
  }
  // The planner awaits it and sees its error; until then it must not count as unhandled.
  index.catch(() => undefined);
  return {
    get index() {
      return index;
    },
    stop: async () => {
      stopped = true;
      await thread?.terminate();
      await index.catch(() => undefined);
      // Its tables are not needed past the plan: a live run's apply and commit run without them.
      index = Promise.resolve(null);
    },
  };
}

/** The thread's index, or null when it ended without one (it failed, or was stopped). */
function fromThread(thread: Worker): Promise<SourceIndexParts | null> {
  return new Promise((resolve) => {
    thread.once("message", (answer: SourceThreadAnswer) => resolve(answer.parts));
    thread.once("error", () => resolve(null));
    thread.once("exit", () => resolve(null));
  });
}
