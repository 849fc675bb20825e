/**
 * Renders a big CSV export on a thread of its own (render-thread.ts):
 * hashing, quoting and staging each row were half of the worker's own part
 * of a large export, all on one core while the other idled once the
 * service's job was done. The pass hands over a batch at a time (one string
 * and one array of lengths, row-batch.ts) and waits only when the thread is
 * MAX_IN_FLIGHT batches behind, so memory stays bounded whatever the
 * export's size.
 *
 * @module
 */

import type { Worker } from "node:worker_threads";
import { ConveyorError } from "../../errors.js";
import { startThread } from "../../thread.js";
import type { FromRenderThread, RenderThreadData, ToRenderThread } from "./render-thread-messages.js";
import { encodeRows, type BatchRow } from "./row-batch.js";

const MAX_IN_FLIGHT = 4;

export interface RenderThreadResult {
  rows: number;
  bytes: number;
  staged: number;
}

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (err: ConveyorError) => void;
}

export class RenderThread {
  private inFlight = 0;
  private readonly waiting: Array<Waiter<void>> = [];
  private finishing: Waiter<RenderThreadResult | null> | null = null;
  private failure: ConveyorError | null = null;
  private closed = false;

  private constructor(private readonly thread: Worker) {
    thread.on("message", (msg: FromRenderThread) => this.receive(msg));
    thread.on("error", (err) => this.fail(new ConveyorError("internal", `The thread rendering the export file failed: ${err.message}`, { cause: err })));
    thread.on("exit", (code) => {
      if (!this.closed) this.fail(new ConveyorError("internal", `The thread rendering the export file stopped (exit code ${code})`));
    });
  }

  /** The thread opens the file afresh (header included) and stages into `data.stagePath`. */
  static start(data: RenderThreadData): RenderThread {
    return new RenderThread(startThread("render-thread", import.meta.url, data));
  }

  /**
   * Rows by snapshot identifier, with their hashes when the caller has them
   * (a diff run); returns a promise only when the pass must wait for the thread.
   */
  add(rows: readonly BatchRow[], hashes: readonly string[] | null, where: string): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (!rows.length) return undefined;
    this.post({ type: "batch", batch: encodeRows(rows, hashes), rows: where });
    this.inFlight++;
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Waits for every batch, closes the file and the staged rows. */
  async finish(): Promise<RenderThreadResult> {
    const result = await this.ask({ type: "finish" });
    await this.close();
    if (!result) throw new ConveyorError("internal", "The export file's render thread gave no result");
    return result;
  }

  /** After a failure: the thread closes its files, then stops; safe to call after `finish`. */
  async abort(): Promise<void> {
    if (this.closed) return;
    if (!this.failure) await this.ask({ type: "abort" }).catch(() => undefined);
    await this.close();
  }

  private ask(msg: ToRenderThread): Promise<RenderThreadResult | null> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.finishing = { resolve, reject };
      this.post(msg);
    });
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.thread.terminate();
    this.fail(new ConveyorError("internal", "The export file's render thread is closed"));
  }

  private post(msg: ToRenderThread): void {
    // The lengths' buffer moves to the thread rather than being copied.
    this.thread.postMessage(msg, msg.type === "batch" ? [msg.batch.lengths.buffer] : []);
  }

  private receive(msg: FromRenderThread): void {
    if (msg.type === "done") {
      this.inFlight--;
      this.waiting.shift()?.resolve();
    } else if (msg.type === "failed") {
      this.fail(new ConveyorError("internal", `Rendering the export file failed at ${msg.message}`));
    } else {
      const finishing = this.finishing;
      this.finishing = null;
      finishing?.resolve(msg.type === "finished" ? { rows: msg.rows, bytes: msg.bytes, staged: msg.staged } : null);
    }
  }

  private fail(err: ConveyorError): void {
    this.failure ??= err;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    const finishing = this.finishing;
    this.finishing = null;
    finishing?.reject(this.failure);
  }
}
