/**
 * The receiving end of an OpWriter, wherever it runs: each message is
 * handled after the one before has been written, in order; the first
 * failure is reported and every later message is then ignored. The writer
 * thread runs it on its port; a pass too small to be worth a thread runs it
 * in process (op-writer.ts).
 *
 * @module
 */

import { OpFiles, type OpFilesOptions } from "./op-files.js";
import type { FromThread, ToThread } from "./op-messages.js";

export interface OpQueueOptions {
  options: OpFilesOptions;
  reply: (msg: FromThread) => void;
  /** Secrets the planner registered since the last page; in process they are already known. */
  adoptSecrets?: (values: readonly string[]) => void;
}

export interface OpQueue {
  post(msg: ToThread): void;
  /** Settles once every message posted so far is handled. */
  drained(): Promise<void>;
}

/** Opens the pass's files now (plan.csv's length is taken here) and returns where messages go. */
export function opQueue({ options, reply, adoptSecrets }: OpQueueOptions): OpQueue {
  const files = OpFiles.open(options);
  let failed = false;

  async function handle(msg: ToThread): Promise<void> {
    const target = await files;
    if (msg.type === "page") {
      if (msg.secrets) adoptSecrets?.(msg.secrets);
      await target.addPage(msg.page);
      reply({ type: "done" });
    } else if (msg.type === "finish") {
      reply({ type: "finished", result: await target.finish() });
    } else {
      await target.discard();
      reply({ type: "discarded" });
    }
  }

  let queue = Promise.resolve();
  return {
    post: (msg) => {
      queue = queue.then(async () => {
        if (failed) return;
        try {
          await handle(msg);
        } catch (err) {
          failed = true;
          reply({ type: "failed", message: err instanceof Error ? err.message : String(err) });
        }
      });
    },
    drained: () => queue,
  };
}
