/**
 * The files a product pass writes per operation: its bulk files and, in a
 * debug run, its lines of plan.csv. Each new value is quoted once for both.
 * plan.csv may already hold lines of an earlier pass of the same run: they
 * are appended to, and the header is written only into an empty file. It
 * runs on the OpWriter's thread, which does nothing else: its files are
 * written with blocking writes.
 *
 * @module
 */

import { stat, truncate } from "node:fs/promises";
import { hasSecret } from "../../secrets.js";
import { bulkAction, BulkBatcher, bulkLine, type BulkFile, type RowLine } from "./bulk-batcher.js";
import type { ByteSink, PlacedLine } from "./byte-sink.js";
import { csvCell } from "./csv-cell.js";
import { OpBytes } from "./op-bytes.js";
import { OpPageDecoder, viewRow, type OpPage, type OpView } from "./op-pages.js";
import { openPlanFile, PlanLines, type OpRow } from "./op-rows.js";

export interface OpFilesOptions {
  bulkFolder: string;
  identifierField: string;
  bulkRows: number;
  /** plan.csv, or null when no plan is written (a live run). */
  planPath: string | null;
  /** Whether the run keeps a copy of each bulk file (a debug run): each is then searched for secrets as it is sealed. */
  keptCopies?: boolean;
}

export interface OpFilesResult {
  files: BulkFile[];
  /** Whether plan.csv got a line from this pass. */
  planned: boolean;
}

function quoted(row: OpRow): string[] {
  const cells = new Array<string>(row.after.length);
  for (let i = 0; i < cells.length; i++) cells[i] = csvCell(row.after[i] ?? "");
  return cells;
}

/**
 * One operation of a page, placed as bytes into a sink; reused from one
 * operation to the next (the walker's view does not move on before it is
 * written). Its text, where the bytes could never fit a buffer.
 */
abstract class ViewLine implements PlacedLine {
  protected view: OpView | null = null;
  protected pageText = "";

  constructor(protected readonly bytes: OpBytes) {}

  protected row(): OpRow | null {
    return this.view && viewRow(this.view, this.pageText);
  }

  abstract bound(): number;
  abstract put(dst: Buffer, at: number): number;
  abstract text(): string;
}

/** An operation's lines of plan.csv. */
class PlanBytesLine extends ViewLine {
  constructor(
    bytes: OpBytes,
    private readonly lines: PlanLines,
  ) {
    super(bytes);
  }

  of(view: OpView, pageText: string): this {
    this.view = view;
    this.pageText = pageText;
    return this;
  }

  bound(): number {
    return this.view ? this.bytes.planBound(this.view) : 0;
  }

  put(dst: Buffer, at: number): number {
    return this.view ? this.bytes.plan(this.view, dst, at) : at;
  }

  text(): string {
    const row = this.row();
    return row ? this.lines.text(row, quoted(row), false) : "";
  }
}

/** An operation's data row of a bulk file, for BulkBatcher. */
class BulkBytesLine extends ViewLine implements RowLine {
  private action = "";

  of(action: string, view: OpView, pageText: string): this {
    this.action = action;
    this.view = view;
    this.pageText = pageText;
    return this;
  }

  bound(): number {
    return this.view ? this.bytes.bulkBound(this.action, this.view) : 0;
  }

  put(dst: Buffer, at: number): number {
    return this.view ? this.bytes.bulkRow(this.action, this.view, dst, at) : at;
  }

  text(): string {
    const row = this.row();
    return row ? bulkLine(this.action, row.identifier, quoted(row)) : "";
  }

  writeTo(sink: ByteSink): Promise<void> | undefined {
    return sink.place(this);
  }
}

export class OpFiles {
  private plan: ByteSink | null = null;
  private readonly lines = new PlanLines();
  private readonly decoder = new OpPageDecoder();
  private readonly bytes = new OpBytes();
  private readonly bulkLine = new BulkBytesLine(this.bytes);
  private readonly planLine = new PlanBytesLine(this.bytes, this.lines);
  private batcher: BulkBatcher;
  private planned = false;

  private constructor(
    private readonly o: OpFilesOptions,
    /** The length of plan.csv before this pass: where a discarded plan is cut back to. */
    private readonly planStart: number,
  ) {
    this.batcher = new BulkBatcher(o.bulkFolder, o.identifierField, o.bulkRows, { blocking: true, searchSealed: o.keptCopies ?? false });
  }

  static async open(o: OpFilesOptions): Promise<OpFiles> {
    const size = o.planPath === null ? 0 : await stat(o.planPath).then((s) => s.size, () => 0);
    return new OpFiles(o, size);
  }

  /**
   * A page of operations from the planner. A page whose values are all ASCII
   * and hold no secret (one search of the page's text) is written as bytes;
   * any other page, and an operation too large for a buffer, as strings.
   */
  async addPage(page: OpPage): Promise<void> {
    const mayHoldSecret = hasSecret(page.text);
    if (mayHoldSecret || !this.bytes.load(page.text)) {
      for (const row of this.decoder.rows(page)) {
        const waiting = this.add(row, mayHoldSecret);
        if (waiting) await waiting;
      }
      return;
    }
    for (const view of this.decoder.walk(page)) {
      if (view.kind === "unchanged") continue;
      if (this.o.planPath !== null) {
        const waiting = this.planBytes(this.o.planPath, view, page.text);
        if (waiting) await waiting;
      }
      const action = bulkAction(view.kind, view.action);
      if (action === null) continue;
      const waiting = this.batcher.row(action, view.columns, this.bulkLine.of(action, view, page.text));
      if (waiting) await waiting;
    }
  }

  private planBytes(planPath: string, view: OpView, text: string): Promise<void> | undefined {
    this.planned = true;
    if (!this.plan) return this.openPlan(planPath).then(() => this.planBytes(planPath, view, text));
    return this.plan.place(this.planLine.of(view, text));
  }

  /**
   * One operation, as strings. Returns a promise only when a file is opened, sealed or a full buffer handed to the disk.
   * `mayHoldSecret` false: the values were tested for secrets together, and hold none.
   */
  add(row: OpRow, mayHoldSecret = true): Promise<void> | undefined {
    if (row.kind === "unchanged") return undefined;
    const cells = quoted(row);
    const planPath = this.o.planPath;
    const plan = planPath === null ? undefined : this.addPlan(planPath, this.lines.text(row, cells, mayHoldSecret));
    const bulk = this.batcher.add(row, cells);
    if (plan && bulk) return Promise.all([plan, bulk]).then(() => undefined);
    return plan ?? bulk;
  }

  private addPlan(planPath: string, text: string): Promise<void> | undefined {
    this.planned = true;
    if (this.plan) return this.plan.write(text);
    return this.openPlan(planPath).then((sink) => sink.write(text));
  }

  private async openPlan(planPath: string): Promise<ByteSink> {
    const sink = await openPlanFile(planPath, { blocking: true });
    this.plan = sink;
    return sink;
  }

  /** Closes every file; the bulk files in the order they were started. */
  async finish(): Promise<OpFilesResult> {
    await this.plan?.close();
    this.plan = null;
    return { files: await this.batcher.finish(), planned: this.planned };
  }

  /** Forgets what this pass wrote (plan.csv is cut back to where it began): the plan is being made again. */
  async discard(): Promise<void> {
    await this.plan?.close();
    this.plan = null;
    if (this.o.planPath !== null && this.planned) await truncate(this.o.planPath, this.planStart);
    this.planned = false;
    await this.batcher.discard();
  }
}
