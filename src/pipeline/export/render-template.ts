/**
 * Step 5 with a `template`: its output replaces the built-in format. The file
 * is written as the records arrive, like the built-in writers: a streamed
 * template (`payload_multi: 1` with a top-level loop over data) renders its
 * loop body per batch of records, one that wants the whole list gets it in
 * memory up to a bound, and `payload_multi: 0` renders each record on its
 * own (the file is the renders one after another; a per-record http export
 * sends each render as one request's body).
 *
 * @module
 */

import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import path from "node:path";
import type { FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { TemplateProcess, type TemplateLimits } from "../../template/renderer.js";
import { exportFormat, type RenderedFile } from "./render.js";
import type { PassRenderer, RenderItem } from "./render.js";

/** Records per message to the render process: large enough to make the hop cheap, small enough to bound memory. */
const BODY_BATCH = 500;
/** Streamed batches that may wait for the render process: bounds the records held while it catches up. */
const QUEUED = 4;

export interface TemplateContext {
  field: string;
  timezone: string;
  now: Date;
  params: Record<string, string>;
  limits?: Partial<TemplateLimits>;
}

export class TemplateRenderer implements PassRenderer {
  readonly takesValues = false;
  private rows = 0;
  private bytes = 0;
  private started = false;
  private closed = false;
  /** Streamed: records not yet rendered (one is always held back, so the last knows it is last). Whole: every record. */
  private held: unknown[] = [];
  /** Streamed: batches sent and not yet written, oldest first; the render process works through them while the pass maps more. */
  private inflight: Promise<void>[] = [];

  private constructor(
    private readonly proc: TemplateProcess,
    private readonly out: WriteStream,
    private readonly columns: readonly string[],
    private readonly multi: boolean,
    readonly name: string,
    readonly localPath: string,
    private readonly config: FileConfig,
  ) {}

  static async open(dir: string, name: string, config: FileConfig, columns: readonly string[], ctx: TemplateContext): Promise<TemplateRenderer> {
    const source = config.template ?? "";
    const proc = await TemplateProcess.start({ source, field: ctx.field, multi: config.payload_multi, timezone: ctx.timezone, now: ctx.now, params: ctx.params, ...(ctx.limits ? { limits: ctx.limits } : {}) });
    const localPath = path.join(dir, path.basename(name));
    return new TemplateRenderer(proc, createWriteStream(localPath), columns, config.payload_multi, name, localPath, config);
  }

  recordOf(values: readonly string[]): Record<string, string> {
    const record: Record<string, string> = {};
    for (let i = 0; i < this.columns.length; i++) record[this.columns[i] as string] = values[i] ?? "";
    return record;
  }

  private async emit(text: string): Promise<void> {
    if (text === "") return;
    this.bytes += Buffer.byteLength(text);
    if (!this.out.write(text)) await once(this.out, "drain");
  }

  private async head(): Promise<void> {
    if (this.started) return;
    this.started = true;
    if (this.proc.streamed) for (const text of await this.proc.request({ op: "head" })) await this.emit(text);
  }

  /**
   * Queues a batch behind the ones in flight (the render process takes one
   * request at a time, and texts are written in order) and returns at once
   * unless QUEUED batches wait already: rendering overlaps the pass's own work.
   */
  private async body(records: unknown[], last: boolean): Promise<void> {
    const first = this.rows - this.held.length - records.length;
    const previous = this.inflight[this.inflight.length - 1] ?? Promise.resolve();
    const next = previous.then(async () => {
      const [text = ""] = await this.proc.request({ op: "body", records, first, last });
      await this.emit(text);
    });
    // Handled here so a failure waits, unreported, for the next await of it instead of crashing the process.
    next.catch(() => undefined);
    this.inflight.push(next);
    while (this.inflight.length > QUEUED) await this.inflight.shift();
  }

  private async drain(): Promise<void> {
    while (this.inflight.length > 0) await this.inflight.shift();
  }

  async writeBatch(items: readonly RenderItem[]): Promise<string[] | null> {
    await this.head();
    this.rows += items.length;
    if (!this.multi) {
      const texts: string[] = [];
      for (let i = 0; i < items.length; i += BODY_BATCH) {
        const rendered = await this.proc.request({ op: "each", records: items.slice(i, i + BODY_BATCH).map((item) => item.data) });
        for (const text of rendered) {
          await this.emit(text);
          texts.push(text);
        }
      }
      return texts;
    }
    for (const item of items) this.held.push(item.data);
    if (!this.proc.streamed) {
      const limit = this.proc.limits.inMemoryRecords;
      if (this.held.length > limit) {
        throw new ConveyorError("template", `${this.proc.field}: the template renders data as one list, which holds at most ${limit} records; this export has more`, {
          details: { field: this.proc.field, limit },
          hint: "Write the records' part as a top-level loop, {% for r in data %}…{% endfor %}, and the template is rendered record by record, for any number of them.",
        });
      }
      return null;
    }
    while (this.held.length > BODY_BATCH) {
      const batch = this.held.slice(0, BODY_BATCH);
      this.held = this.held.slice(BODY_BATCH);
      await this.body(batch, false);
    }
    return null;
  }

  async close(): Promise<RenderedFile> {
    await this.head();
    if (this.multi && this.proc.streamed) {
      const rest = this.held;
      this.held = [];
      if (rest.length > 0) await this.body(rest, true);
      await this.drain();
      for (const text of await this.proc.request({ op: "tail" })) await this.emit(text);
    } else if (this.multi) {
      for (const text of await this.proc.request({ op: "whole", data: this.held })) await this.emit(text);
      this.held = [];
    }
    this.closed = true;
    await this.proc.close();
    this.out.end();
    if (!this.out.closed) await once(this.out, "close");
    return { name: this.name, format: exportFormat(this.config, this.name), localPath: this.localPath, rows: this.rows, bytes: this.bytes };
  }

  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.proc.close();
    this.out.destroy();
  }
}
