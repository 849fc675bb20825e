/**
 * Writes a product pass's planned operations (bulk files, plan.csv) on a
 * thread of its own. Quoting, building and encoding the lines of a
 * million-row plan took more of a run's time than reading and planning it;
 * on a second core it runs beside them. The planner hands over operations
 * a page at a time and waits only when the thread is MAX_IN_FLIGHT pages
 * behind, so memory stays bounded whatever the feed's size.
 *
 * The thread starts once THREAD_FROM_OPS writes are planned; the pages
 * before are held here and go first. A pass whose first page of writes
 * comes densely has the thread started then, ahead of that count, so that
 * the thread is up by the time the held pages go: started at the count, the
 * planner stood idle while it started, on a machine whose two cores the
 * pass's other threads kept busy too. A pass that plans fewer (a small feed,
 * or a nightly feed that barely changed) is written in this process when it
 * finishes: starting a thread costs more than writing those lines, a small
 * ad hoc run waited for it, and the thread's own heap was most of what a
 * large diff run's peak memory held past its budget. For the same reason a
 * pass whose writes are a small share of the rows it has read by then (a
 * nightly run of a larger feed) goes on writing in this process instead of
 * starting the thread: its writes cost the planner little, and the thread
 * as much memory as at any size. A pass known to write most of a large
 * file's rows (startAhead) skips all of that: its thread starts while the
 * file downloads and takes every page.
 *
 * @module
 */

import type { Worker } from "node:worker_threads";
import { ConveyorError } from "../../errors.js";
import { secretCount, secretValues } from "../../secrets.js";
import { startThread } from "../../thread.js";
import type { OpFilesOptions, OpFilesResult } from "./op-files.js";
import type { FromThread, OpThreadData, ToThread } from "./op-messages.js";
import { OpPageEncoder } from "./op-pages.js";
import { opQueue } from "./op-queue.js";
import type { PlannedOp } from "../planned-op.js";

const PAGE_OPS = 500;
const MAX_IN_FLIGHT = 8;
/** Writes a pass plans before its thread starts: a nightly run of a million rows with one in a hundred changed stays below. */
export const THREAD_FROM_OPS = 20_000;
/** Bytes of files from which a pass that writes most of its rows has the thread started before its first row (startAhead). */
export const AHEAD_FROM_BYTES = 8 << 20;
/** Writes per row read below which a pass that reaches THREAD_FROM_OPS writes in process all the same. */
export const THREAD_FROM_SHARE = 1 / 20;

interface Pending<T> {
  resolve: (value: T) => void;
  reject: (err: ConveyorError) => void;
}

type PageMessage = Extract<ToThread, { type: "page" }>;

/** Where the pages go: the writer thread, or the same queue in this process. */
interface Channel {
  threaded: boolean;
  post(msg: ToThread): void;
  close(): Promise<void>;
}

export class OpWriter {
  private encoder = new OpPageEncoder();
  private inFlight = 0;
  private readonly waiting: Array<Pending<void>> = [];
  private request: (Pending<OpFilesResult | null> & { kind: "finished" | "discarded" }) | null = null;
  private failure: ConveyorError | null = null;
  private secretsSent = 0;
  private closed = false;
  private channel: Channel | null = null;
  /** The thread started ahead of THREAD_FROM_OPS, not yet the channel. */
  private ahead: Channel | null = null;
  /** startAhead was called: every page goes to the thread, none is held. */
  private committed = false;
  /** Full pages held until the pass has planned enough writes to start the thread, or finishes without. */
  private held: PageMessage[] = [];
  private threadAlive = false;
  private readonly planned: boolean;
  /** The rows the pass had read when last told (noteRows). */
  private rowsRead = 0;

  private constructor(private readonly options: OpFilesOptions) {
    this.planned = options.planPath !== null;
  }

  static open(options: OpFilesOptions): OpWriter {
    return new OpWriter(options);
  }

  /** Whether the operations went to a thread (for the tests: a small pass starts none). */
  get threaded(): boolean {
    return this.channel?.threaded ?? false;
  }

  /** Whether the thread still runs (for the tests: it ends once the last page is written). */
  get threadRunning(): boolean {
    return this.threadAlive;
  }

  /** Returns a promise only when the thread is behind and the planner must wait for it. */
  add(op: PlannedOp): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    // Neither file has a line for an unchanged record; a skipped one is only a plan line.
    if (op.kind === "unchanged" || (op.kind === "skipped" && !this.planned)) return undefined;
    this.encoder.add(op);
    return this.encoder.size < PAGE_OPS ? undefined : this.send(true);
  }

  /**
   * The pass will write a line for most of its rows (it is no diff run) and
   * its files are large enough to plan THREAD_FROM_OPS writes: the thread is
   * started now, while the files download, and takes every page from the
   * first. Started at the first page, it was still starting (beside the
   * download's hash thread) when the held pages went; and held pages, sent
   * at once, left the planner idle until the thread had written all but
   * MAX_IN_FLIGHT of them.
   */
  startAhead(): void {
    if (this.closed || this.channel) return;
    this.committed = true;
    this.ahead ??= this.startThread();
  }

  /** The rows the pass has read so far, mapped or not: the thread starts only for writes that are not a small share of them. */
  noteRows(rows: number): void {
    this.rowsRead = rows;
  }

  /** Writes what is left and closes every file; the bulk files in the order they were started. */
  async finish(): Promise<OpFilesResult> {
    if (this.encoder.size || this.held.length) await this.send(false);
    const result = await this.ask({ type: "finish" }, "finished");
    if (!result) throw new ConveyorError("internal", "The thread writing the bulk files gave no result");
    // Nothing is written after the last page: ending the thread now gives its heap back before the apply,
    // which would otherwise hold it for as long as the service takes the bulk files.
    await this.close();
    return result;
  }

  /** Drops every operation so far, written or not: the plan is being made again. */
  async discard(): Promise<void> {
    // The page not sent may hold column lists the thread has never seen: the next pages send theirs afresh.
    this.encoder = new OpPageEncoder();
    this.held = [];
    // Nothing was sent anywhere yet: the operations so far were all in those pages.
    if (!this.channel) return;
    await this.ask({ type: "discard" }, "discarded");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.ahead?.close();
    await this.channel?.close();
    this.fail(new ConveyorError("internal", "The bulk file writer is closed"));
  }

  /**
   * The channel, made on first use: a full page (the pass has planned THREAD_FROM_OPS writes) starts the thread,
   * unless those writes are sparse among the rows read; the last page of a small pass stays here.
   */
  private open(full: boolean): Channel {
    if (this.channel) return this.channel;
    const threaded = this.committed || (full && this.dense(THREAD_FROM_OPS));
    this.channel = threaded ? (this.ahead ?? this.startThread()) : this.inProcess();
    // Not awaited: a small pass would wait for a thread it never used to stop.
    if (!threaded) this.ahead?.close().catch(() => undefined);
    this.ahead = null;
    return this.channel;
  }

  /** Whether `writes` are not a small share of the rows read: sparse writes cost the planner less than a thread's heap. */
  private dense(writes: number): boolean {
    return writes >= THREAD_FROM_SHARE * this.rowsRead;
  }

  private startThread(): Channel {
    const data: OpThreadData = { options: this.options, secrets: secretValues() };
    this.secretsSent = data.secrets.length;
    const thread: Worker = startThread("op-writer-thread", import.meta.url, data);
    this.threadAlive = true;
    let stopped = false;
    thread.on("message", (msg: FromThread) => this.receive(msg));
    thread.on("error", (err) => this.fail(new ConveyorError("internal", `The thread writing the bulk files failed: ${err.message}`, { cause: err })));
    thread.on("exit", (code) => {
      if (!stopped && !this.closed) this.fail(new ConveyorError("internal", `The thread writing the bulk files stopped (exit code ${code})`));
    });
    return {
      threaded: true,
      post: (msg) => thread.postMessage(msg),
      close: async () => {
        stopped = true;
        this.threadAlive = false;
        await thread.terminate();
      },
    };
  }

  private inProcess(): Channel {
    const queue = opQueue({ options: this.options, reply: (msg) => this.receive(msg) });
    // Closed mid-write (a pass that failed elsewhere), it lets the write end rather than leave files half open.
    return { threaded: false, post: (msg) => queue.post(msg), close: () => queue.drained() };
  }

  private send(full: boolean): Promise<void> | undefined {
    // Before the thread starts, full pages wait until the pass has planned enough writes to pay for it.
    const hold = !this.channel && !this.committed && full && (this.held.length + 1) * PAGE_OPS < THREAD_FROM_OPS;
    // A page's text is a string of its own (OpPageEncoder.take): held, it keeps no piece of the feed alive.
    if (this.encoder.size) this.held.push({ type: "page", page: this.encoder.take() });
    if (hold) {
      if (!this.ahead && this.dense(this.held.length * PAGE_OPS)) this.ahead = this.startThread();
      return undefined;
    }
    const channel = this.open(full);
    const pages = this.held;
    this.held = [];
    for (const page of pages) this.post(channel, page);
    return this.belowLimit();
  }

  private post(channel: Channel, message: PageMessage): void {
    // A secret registered since the last page (a token fetched mid-run) must be masked there too; in process it is known.
    if (channel.threaded && secretCount() !== this.secretsSent) {
      message.secrets = secretValues();
      this.secretsSent = message.secrets.length;
    }
    channel.post(message);
    this.inFlight++;
  }

  /** Settles once fewer than MAX_IN_FLIGHT pages wait to be written; undefined when that is so already. */
  private belowLimit(): Promise<void> | undefined {
    if (this.inFlight < MAX_IN_FLIGHT) return undefined;
    // Each written page wakes one waiter: held pages sent at once take several to drain.
    return new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject })).then(() => this.belowLimit());
  }

  private ask(message: ToThread, kind: "finished" | "discarded"): Promise<OpFilesResult | null> {
    if (this.failure) return Promise.reject(this.failure);
    const channel = this.open(false);
    return new Promise((resolve, reject) => {
      this.request = { resolve, reject, kind };
      channel.post(message);
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
