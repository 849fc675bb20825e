/**
 * The receiving end of an OpWriter, wherever it runs: each message is
 * handled after the one before has been written, in order; the first
 * failure is reported and every later message is then ignored. The writer
 * thread runs it on its port; a pass too small to be worth a thread runs it
 * in process (op-writer.ts).
 *
 * @module
 */

import { inOrder, type InOrder } from "../../thread.js";
import { OpFiles, type OpFilesOptions } from "./op-files.js";
import type { FromThread, ToThread } from "./op-messages.js";

export interface OpQueueOptions {
  options: OpFilesOptions;
  reply: (msg: FromThread) => void;
  /** Secrets the planner registered since the last page; in process they are already known. */
  adoptSecrets?: (values: readonly string[]) => void;
}

export type OpQueue = InOrder<ToThread>;

/** Opens the pass's files now (plan.csv's length is taken here) and returns where messages go. */
export function opQueue({ options, reply, adoptSecrets }: OpQueueOptions): OpQueue {
  const files = OpFiles.open(options);

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

  return inOrder(handle, (_msg, message) => reply({ type: "failed", message }));
}
