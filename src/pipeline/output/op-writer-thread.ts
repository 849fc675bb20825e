/**
 * The thread of an OpWriter: its messages go to an op queue, which writes
 * them in order and answers on the port; after the first failure the thread
 * only waits to be terminated.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
import { adoptSecretValues } from "../../secrets.js";
import { opQueue } from "./op-queue.js";
import type { FromThread, OpThreadData, ToThread } from "./op-messages.js";

const port = parentPort;
if (!port) throw new Error("op-writer-thread runs as a worker thread");
const data = workerData as OpThreadData;
adoptSecretValues(data.secrets);
const queue = opQueue({ options: data.options, reply: (msg: FromThread) => port.postMessage(msg), adoptSecrets: adoptSecretValues });
port.on("message", (msg: ToThread) => queue.post(msg));
