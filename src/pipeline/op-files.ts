import { stat, truncate } from "node:fs/promises";
import { BulkBatcher, type BulkFile } from "./bulk-batcher.js";
import { ByteSink } from "./byte-sink.js";
import { csvCell } from "./csv-cell.js";
import { PLAN_HEADER, PlanLines, type OpRow } from "./op-rows.js";

/**
 * The files a product pass writes per operation: its bulk files and, in a
 * debug run, its lines of plan.csv. Each new value is quoted once for both.
 * plan.csv may already hold lines of an earlier pass of the same run: they
 * are appended to, and the header is written only into an empty file.
 */
export interface OpFilesOptions {
  bulkFolder: string;
  identifierField: string;
  bulkRows: number;
  /** plan.csv, or null when no plan is written (a live run). */
  planPath: string | null;
}

export interface OpFilesResult {
  files: BulkFile[];
  /** Whether plan.csv got a line from this pass. */
  planned: boolean;
}

export class OpFiles {
  private plan: ByteSink | null = null;
  private readonly lines = new PlanLines();
  private batcher: BulkBatcher;
  private planned = false;

  private constructor(
    private readonly o: OpFilesOptions,
    /** The length of plan.csv before this pass: where a discarded plan is cut back to. */
    private readonly planStart: number,
  ) {
    this.batcher = new BulkBatcher(o.bulkFolder, o.identifierField, o.bulkRows);
  }

  static async open(o: OpFilesOptions): Promise<OpFiles> {
    const size = o.planPath === null ? 0 : await stat(o.planPath).then((s) => s.size, () => 0);
    return new OpFiles(o, size);
  }

  /**
   * Returns a promise only when a file is opened, sealed or a full buffer handed to the disk.
   * `mayHoldSecret` false: the values were tested for secrets together, and hold none.
   */
  add(row: OpRow, mayHoldSecret = true): Promise<void> | undefined {
    if (row.kind === "unchanged") return undefined;
    const cells = new Array<string>(row.after.length);
    for (let i = 0; i < cells.length; i++) cells[i] = csvCell(row.after[i] ?? "");
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
    const sink = await ByteSink.open(planPath, { append: true });
    this.plan = sink;
    if (this.planStart === 0) await sink.write(PLAN_HEADER);
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
