/**
 * Writes a product pass's planned operations (bulk files, plan.csv) on a
 * thread of its own. Quoting, building and encoding the lines of a
 * million-row plan took more of a run's time than reading and planning it;
 * on a second core it runs beside them. The planner hands over operations
 * a page at a time and waits only when the thread is MAX_IN_FLIGHT pages
 * behind, so memory stays bounded whatever the feed's size.
 *
 * @module
 */

import type { Worker } from "node:worker_threads";
import { ConveyorError } from "../../errors.js";
import { secretCount, secretValues } from "../../secrets.js";
import { startThread } from "../../thread.js";
import type { OpFilesOptions, OpFilesResult } from "./op-files.js";
import { OpPageEncoder, type OpPage } from "./op-pages.js";
import type { PlannedOp } from "../planned-op.js";

export type ToThread = { type: "page"; page: OpPage; secrets?: string[] } | { type: "finish" } | { type: "discard" };
export type FromThread = { type: "done" } | { type: "finished"; result: OpFilesResult } | { type: "discarded" } | { type: "failed"; message: string };

export interface OpThreadData {
  options: OpFilesOptions;
  secrets: string[];
}

const PAGE_OPS = 500;
const MAX_IN_FLIGHT = 8;

interface Pending<T> {
  resolve: (value: T) => void;
  reject: (err: ConveyorError) => void;
}

export class OpWriter {
  private encoder = new OpPageEncoder();
  private inFlight = 0;
  private readonly waiting: Array<Pending<void>> = [];
  private request: (Pending<OpFilesResult | null> & { kind: "finished" | "discarded" }) | null = null;
  private failure: ConveyorError | null = null;
  private secretsSent: number;
  private closed = false;

  private constructor(
    private readonly thread: Worker,
    private readonly planned: boolean,
  ) {
    this.secretsSent = secretCount();
    thread.on("message", (msg: FromThread) => this.receive(msg));
    thread.on("error", (err) => this.fail(new ConveyorError("internal", `The thread writing the bulk files failed: ${err.message}`, { cause: err })));
    thread.on("exit", (code) => {
      if (!this.closed) this.fail(new ConveyorError("internal", `The thread writing the bulk files stopped (exit code ${code})`));
    });
  }

  static open(options: OpFilesOptions): OpWriter {
    const data: OpThreadData = { options, secrets: secretValues() };
    return new OpWriter(startThread("op-writer-thread", import.meta.url, data), options.planPath !== null);
  }

  /** Returns a promise only when the thread is behind and the planner must wait for it. */
  add(op: PlannedOp): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    // Neither file has a line for an unchanged record; a skipped one is only a plan line.
    if (op.kind === "unchanged" || (op.kind === "skipped" && !this.planned)) return undefined;
    this.encoder.add(op);
    return this.encoder.size < PAGE_OPS ? undefined : this.send();
  }

  /** Writes what is left and closes every file; the bulk files in the order they were started. */
  async finish(): Promise<OpFilesResult> {
    if (this.encoder.size) await this.send();
    const result = await this.ask({ type: "finish" }, "finished");
    if (!result) throw new ConveyorError("internal", "The thread writing the bulk files gave no result");
    return result;
  }

  /** Drops every operation so far, written or not: the plan is being made again. */
  async discard(): Promise<void> {
    // The page not sent may hold column lists the thread has never seen: the next pages send theirs afresh.
    this.encoder = new OpPageEncoder();
    await this.ask({ type: "discard" }, "discarded");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.thread.terminate();
    this.fail(new ConveyorError("internal", "The bulk file writer is closed"));
  }

  private send(): Promise<void> | undefined {
    const message: ToThread = { type: "page", page: this.encoder.take() };
    // A secret registered since the last page (a token fetched mid-run) must be masked there too.
    if (secretCount() !== this.secretsSent) {
      message.secrets = secretValues();
      this.secretsSent = message.secrets.length;
    }
    this.thread.postMessage(message);
    this.inFlight++;
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    return new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private ask(message: ToThread, kind: "finished" | "discarded"): Promise<OpFilesResult | null> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.request = { resolve, reject, kind };
      this.thread.postMessage(message);
    });
  }

  private receive(msg: FromThread): void {
    if (msg.type === "done") {
      this.inFlight--;
      this.waiting.shift()?.resolve();
    } else if (msg.type === "failed") {
      this.fail(new ConveyorError("internal", `Writing the bulk files failed: ${msg.message}`));
    } else if (this.request?.kind === msg.type) {
      const request = this.request;
      this.request = null;
      request.resolve(msg.type === "finished" ? msg.result : null);
    }
  }

  private fail(err: ConveyorError): void {
    this.failure ??= err;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
    const request = this.request;
    this.request = null;
    request?.reject(this.failure);
  }
}
