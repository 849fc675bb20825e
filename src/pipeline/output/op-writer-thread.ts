/**
 * The thread of an OpWriter: each message is handled after the one before
 * has been written, in order; the first failure is reported and the thread
 * then only waits to be terminated.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
import { adoptSecretValues } from "../../secrets.js";
import { OpFiles } from "./op-files.js";
import type { FromThread, OpThreadData, ToThread } from "./op-writer.js";

const port = parentPort;
if (!port) throw new Error("op-writer-thread runs as a worker thread");
const data = workerData as OpThreadData;
adoptSecretValues(data.secrets);
const files = OpFiles.open(data.options);
let failed = false;

const reply = (msg: FromThread): void => port.postMessage(msg);

async function handle(msg: ToThread): Promise<void> {
  const target = await files;
  if (msg.type === "page") {
    if (msg.secrets) adoptSecretValues(msg.secrets);
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
port.on("message", (msg: ToThread) => {
  queue = queue.then(async () => {
    if (failed) return;
    try {
      await handle(msg);
    } catch (err) {
      failed = true;
      reply({ type: "failed", message: err instanceof Error ? err.message : String(err) });
    }
  });
});
