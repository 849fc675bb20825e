import { mkdir, writeFile, copyFile } from "node:fs/promises";
import path from "node:path";
import { openWriter, type RecordWriter } from "../formats/index.js";
import { maskDeep, maskSecrets } from "../secrets.js";
import type { PlannedOp } from "./plan.js";

/**
 * The debug files of a run (runs.md, "Debug mode"). A debug run writes them
 * all; a live run keeps only `errors.csv` and `summary.json` (for the
 * notification and the run record), so a million-row live run does not pay
 * for a million-line plan. Every text passes the secret mask.
 */
export class DebugFiles {
  private plan: RecordWriter | undefined;
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

  async addPlan(op: PlannedOp): Promise<void> {
    if (!this.full) return;
    this.plan ??= await this.writer("plan.csv", ["operation", "action", "identifier", "field", "before", "after"]);
    const base = { operation: op.kind, action: op.action ?? "", identifier: op.identifier };
    if (op.changes.length === 0) {
      await this.plan.write({ ...base, field: "", before: "", after: op.reason ?? "" });
      return;
    }
    for (const c of op.changes) {
      await this.plan.write({ ...base, field: c.field, before: maskSecrets(c.before ?? ""), after: maskSecrets(c.after) });
    }
  }

  async addError(line: number | null, identifier: string, message: string): Promise<void> {
    this.errors ??= await this.writer("errors.csv", ["line", "identifier", "message"]);
    await this.errors.write({ line: line === null ? "" : String(line), identifier, message: maskSecrets(message) });
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
    await copyFile(localPath, path.join(this.folder, target));
    this.names.add(target);
  }

  async addBulkFile(localPath: string, name: string): Promise<void> {
    if (!this.full) return;
    await copyFile(localPath, path.join(this.folder, name));
    this.names.add(name);
  }

  async addJson(name: string, body: unknown): Promise<void> {
    await writeFile(path.join(this.folder, name), `${maskSecrets(JSON.stringify(maskDeep(body), null, 2))}\n`);
    this.names.add(name);
  }

  /** Closes the writers; the file names relative to the debug folder. */
  async finish(): Promise<string[]> {
    for (const w of [this.plan, this.errors, this.records]) if (w) await w.close();
    return [...this.names].sort();
  }
}
