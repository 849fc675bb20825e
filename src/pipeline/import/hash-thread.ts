/**
 * The thread of `downloadedSha256`: hashes one file, answers with the hex
 * digest or the error's message.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
import { fileSha256 } from "../../file-sha256.js";

const port = parentPort;
if (!port) throw new Error("hash-thread runs as a worker thread");
try {
  port.postMessage({ sha256: await fileSha256(String(workerData)) });
} catch (err) {
  port.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
