/**
 * The thread of a RenderThread: renders batches of rows into the export
 * file and stages their snapshot lines, in the order they come. Each line
 * is encoded into a byte buffer as soon as it is made, so it dies young: a
 * batch of lines kept as strings until written survived collection after
 * collection in the thread's small young generation, which cost more than
 * the rendering. The first failure is reported with the rows of its batch;
 * the thread then only waits to be terminated.
 *
 * @module
 */

import { parentPort, workerData } from "node:worker_threads";
// The CSV writer's module alone: the formats' index would load every reader and writer into the thread.
import { csvLine } from "../../formats/text-writers.js";
import { inOrder } from "../../thread.js";
import { ByteSink } from "../output/byte-sink.js";
import { joinedHash, stageLine } from "./diff.js";
import { eachRow } from "./row-batch.js";
import type { FromRenderThread, RenderThreadData, ToRenderThread } from "./render-thread-messages.js";

const port = parentPort;
if (!port) throw new Error("render-thread runs as a worker thread");
const data = workerData as RenderThreadData;

interface Files {
  file: ByteSink;
  stage: ByteSink;
  line: (values: readonly string[]) => string;
}

async function open(): Promise<Files> {
  const line = csvLine(data.delimiter, data.enclosure);
  // Blocking writes: this thread has nothing else to do meanwhile.
  const file = await ByteSink.open(data.localPath, { blocking: true });
  const stage = await ByteSink.open(data.stagePath, { blocking: true });
  await file.write(line(data.columns));
  return { file, stage, line };
}

const opened = open();
// A file that cannot be opened fails the first batch, with its rows; not the thread, unhandled, before it.
opened.catch(() => undefined);
let rows = 0;
let staged = 0;

const reply = (msg: FromRenderThread): void => port.postMessage(msg);

async function handle(msg: ToRenderThread): Promise<void> {
  const { file, stage, line } = await opened;
  if (msg.type === "batch") {
    const hashes = msg.batch.hashes === "" ? null : msg.batch.hashes.split("\n");
    // Staged as the main thread stages them; blocking sinks return no promise.
    eachRow(msg.batch, (i, key, values, joined) => {
      void stage.write(stageLine(hashes?.[i] ?? joinedHash(joined), key));
      void file.write(line(values));
    });
    rows += msg.batch.rows;
    staged += msg.batch.rows;
    reply({ type: "done" });
  } else if (msg.type === "finish") {
    await file.close();
    await stage.close();
    reply({ type: "finished", rows, bytes: file.bytes, staged });
  } else {
    await file.close().catch(() => undefined);
    await stage.close().catch(() => undefined);
    reply({ type: "aborted" });
  }
}

const messages = inOrder(handle, (msg: ToRenderThread, message) => reply({ type: "failed", message: `${msg.type === "batch" ? `${msg.rows}: ` : ""}${message}` }));
port.on("message", (msg: ToRenderThread) => messages.post(msg));
