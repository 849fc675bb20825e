import { mkdir, writeFile, copyFile, link } from "node:fs/promises";
import path from "node:path";
import { openWriter, type RecordWriter } from "../formats/index.js";
import { hasSecret, maskDeep, maskSecrets } from "../secrets.js";
import { ByteSink } from "./byte-sink.js";
import { csvCell as cell } from "./csv-cell.js";
import type { PlannedOp } from "./plan.js";

/**
 * The debug files of a run (runs.md, "Debug mode"). A debug run writes them
 * all; a live run keeps only `errors.csv` and `summary.json` (for the
 * notification and the run record), so a million-row live run does not pay
 * for a million-line plan. Every text passes the secret mask.
 */
const PLAN_COLUMNS = ["operation", "action", "identifier", "field", "before", "after"];


/** Hard-links a file into the debug folder (both live under the run's folder), copying only where linking fails. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
  }
}

export class DebugFiles {
  private plan: ByteSink | undefined;
  private readonly fieldCells = new Map<string, string>();
  private errors: RecordWriter | undefined;
  private records: RecordWriter | undefined;
  private recordsKept = 0;
  private readonly names = new Set<string>();

  constructor(
    readonly folder: string,
    private readonly maxRecords: number,
    /** false for a live run: only errors.csv and summary.json. */
    readonly full: boolean,
  ) {}

  static async open(folder: string, maxRecords: number, full: boolean): Promise<DebugFiles> {
    await mkdir(path.join(folder, "source"), { recursive: true });
    return new DebugFiles(folder, maxRecords, full);
  }

  private async writer(name: string, columns: string[]): Promise<RecordWriter> {
    this.names.add(name);
    return openWriter(path.join(this.folder, name), { format: "csv", columns });
  }

  /**
   * A million creates are eleven million plan lines: each operation becomes
   * one string, with the secret mask run only on the values of an operation
   * where a value holds a secret (a test per value, no joined copy); the string
   * goes into the sink's byte buffer at once, and only a full buffer's write
   * is awaited. `afterCells` are the new values already quoted for the bulk file.
   */
  addPlan(op: PlannedOp, afterCells?: readonly string[]): Promise<void> | undefined {
    // One line per changed field: an unchanged record has none.
    if (!this.full || op.kind === "unchanged") return undefined;
    if (!this.plan) return this.openPlan().then(() => this.addPlan(op, afterCells));
    const prefix = `${cell(op.kind)},${cell(op.action ?? "")},${cell(op.identifier)},`;
    if (op.changes.length === 0) return this.plan.write(`${prefix},,${cell(op.reason ?? "")}\r\n`);
    const masked = op.changes.some((c) => hasSecret(c.after) || (c.before !== null && hasSecret(c.before)));
    let text = "";
    let i = 0;
    for (const c of op.changes) {
      const before = masked ? maskSecrets(c.before ?? "") : (c.before ?? "");
      const quoted = afterCells?.[i++];
      const after = masked ? cell(maskSecrets(c.after)) : (quoted ?? cell(c.after));
      text += `${prefix}${this.fieldCell(c.field)},${cell(before)},${after}\r\n`;
    }
    return this.plan.write(text);
  }

  /** A plan names the same few fields millions of times: each is quoted once. */
  private fieldCell(field: string): string {
    let quoted = this.fieldCells.get(field);
    if (quoted === undefined) {
      quoted = cell(field);
      if (this.fieldCells.size < 10_000) this.fieldCells.set(field, quoted);
    }
    return quoted;
  }

  private async openPlan(): Promise<void> {
    this.names.add("plan.csv");
    this.plan = await ByteSink.open(path.join(this.folder, "plan.csv"));
    await this.plan.write(`${PLAN_COLUMNS.join(",")}\r\n`);
  }

  /** Starts plan.csv over: the plan is being made again. */
  async resetPlan(): Promise<void> {
    if (!this.plan) return;
    await this.plan.close();
    this.plan = undefined;
    this.names.delete("plan.csv");
  }

  async addError(line: number | null, identifier: string, message: string): Promise<void> {
    this.errors ??= await this.writer("errors.csv", ["line", "identifier", "message"]);
    await this.errors.write({ line: line === null ? "" : String(line), identifier, message: maskSecrets(message) });
  }

  /** False once records.csv has its `debug_rows` records (and always in a live run). */
  get wantsRecords(): boolean {
    return this.full && this.recordsKept < this.maxRecords;
  }

  /** The first `debug_rows` mapped records; their columns are fixed by the first one. */
  async addRecord(columns: readonly string[], record: Record<string, string>): Promise<void> {
    if (!this.full || this.recordsKept >= this.maxRecords) return;
    this.records ??= await this.writer("records.csv", [...columns]);
    const masked: Record<string, string> = {};
    for (const c of columns) masked[c] = maskSecrets(record[c] ?? "");
    await this.records.write(masked);
    this.recordsKept++;
  }

  async addSource(localPath: string, name: string): Promise<void> {
    if (!this.full) return;
    const target = path.join("source", path.basename(name));
    await linkOrCopy(localPath, path.join(this.folder, target));
    this.names.add(target);
  }

  async addBulkFile(localPath: string, name: string): Promise<void> {
    if (!this.full) return;
    await linkOrCopy(localPath, path.join(this.folder, name));
    this.names.add(name);
  }

  async addJson(name: string, body: unknown): Promise<void> {
    await writeFile(path.join(this.folder, name), `${maskSecrets(JSON.stringify(maskDeep(body), null, 2))}\n`);
    this.names.add(name);
  }

  /**
   * What a live run would send on top of this run's own requests (runs.md,
   * summary.json): a product bulk file is one upload, then at least one status
   * poll and the result file; an order body is one request.
   */
  liveRequests(own: { read: number; write: number }): { read: number; write: number } {
    const names = [...this.names].filter((n) => n.startsWith("bulk-"));
    const bulk = names.filter((n) => n.endsWith(".csv")).length;
    const bodies = names.filter((n) => n.endsWith(".json")).length;
    return { read: own.read + 2 * bulk, write: own.write + bulk + bodies };
  }

  /** Closes the writers; the file names relative to the debug folder. */
  async finish(): Promise<string[]> {
    await this.plan?.close();
    for (const w of [this.errors, this.records]) if (w) await w.close();
    return [...this.names].sort();
  }
}
