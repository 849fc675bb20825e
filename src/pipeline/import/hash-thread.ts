/**
 * The thread of `downloadedSha256`: hashes one file, answers with the hex
 * digest or the error's message.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";

const port = parentPort;
if (!port) throw new Error("hash-thread runs as a worker thread");
const file = String(workerData);
const hash = createHash("sha256");
try {
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  port.postMessage({ sha256: hash.digest("hex") });
} catch (err) {
  port.postMessage({ error: err instanceof Error ? err.message : String(err) });
}
