/**
 * The debug files of a run (runs.md, "Debug mode"). A debug run writes them
 * all; a live run keeps only `errors.csv` and `summary.json` (for the
 * notification and the run record), so a million-row live run does not pay
 * for a million-line plan. errors.csv has the row errors of both and, in a
 * live run, each record the apply stage failed, with the service's message.
 * Every text passes the secret mask.
 *
 * @module
 */

import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { openWriter, type RecordWriter } from "../formats/index.js";
import { count } from "../plural.js";
import { maskDeep, maskSecrets } from "../secrets.js";
import type { FailedRecords } from "./apply-journal.js";
import { ByteSink } from "./output/byte-sink.js";
import { csvCell as cell } from "./output/csv-cell.js";
import { keepMasked } from "./debug-mask.js";
import type { SecretSearch } from "./secret-search.js";
import { FailureTally } from "./failure-tally.js";
import { openPlanFile, opRow, PlanLines } from "./output/op-rows.js";
import type { PlannedOp } from "./planned-op.js";

/** Where in the feed a failed record stands: its file and line, for errors.csv. */
export interface SourcePlace {
  file: string;
  line: number;
}

/** A kept file that had a secret masked: it is no longer the file the run read or would send. */
export interface MaskedFile {
  file: string;
  values: number;
  note: string;
}

export class DebugFiles {
  private plan: ByteSink | undefined;
  private readonly lines = new PlanLines();
  private errors: RecordWriter | undefined;
  private records: RecordWriter | undefined;
  private recordsKept = 0;
  private readonly names = new Set<string>();
  private readonly maskedFiles: MaskedFile[] = [];
  /** The apply stage's failed records by reason, for the run record. */
  readonly failures = new FailureTally();
  /** Row errors: how many, and the first one's message. */
  readonly rowErrors: { count: number; first: string | null } = { count: 0, first: null };

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

  /** A plan line of an order or bulk-file pass; a product pass writes its lines on the OpWriter's thread. */
  addPlan(op: PlannedOp): Promise<void> | undefined {
    // One line per changed field: an unchanged record has none.
    if (!this.full || op.kind === "unchanged") return undefined;
    const row = opRow(op);
    const text = this.lines.text(row, row.after.map(cell));
    if (!this.plan) return this.openPlan().then((sink) => sink.write(text));
    return this.plan.write(text);
  }

  private async openPlan(): Promise<ByteSink> {
    const sink = await openPlanFile(path.join(this.folder, "plan.csv"));
    this.plan = sink;
    this.names.add("plan.csv");
    return sink;
  }

  /**
   * plan.csv for another writer to append to (a product pass's thread), with
   * what this object wrote so far on disk; null when no plan is written.
   */
  async lendPlan(): Promise<string | null> {
    if (!this.full) return null;
    await this.plan?.close();
    this.plan = undefined;
    return path.join(this.folder, "plan.csv");
  }

  /** The writer plan.csv was lent to wrote lines into it. */
  notePlan(): void {
    this.names.add("plan.csv");
  }

  /** A row error: a row read but not planned. */
  async addError(line: number | null, identifier: string, message: string): Promise<void> {
    this.rowErrors.count++;
    this.rowErrors.first ??= maskSecrets(message);
    await this.errorLine(line, identifier, message);
  }

  private async errorLine(line: number | null, identifier: string, message: string): Promise<void> {
    this.errors ??= await this.writer("errors.csv", ["line", "identifier", "message"]);
    await this.errors.write({ line: line === null ? "" : String(line), identifier: maskSecrets(identifier), message: maskSecrets(message) });
  }

  /**
   * The records an apply stage failed: each is a line of errors.csv with the
   * service's message, and its file and line where `places` knows them (as a
   * row error names its file), and is counted by reason in `failures`.
   */
  async addFailures(failed: FailedRecords, places: ReadonlyMap<string, SourcePlace> = new Map()): Promise<void> {
    for (const [identifier, message] of failed.entries()) {
      this.failures.add(identifier, message);
      const place = places.get(identifier);
      await this.errorLine(place?.line ?? null, identifier, place ? `${place.file}: ${message}` : message);
    }
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

  /**
   * A copy of a fetched file (or of an export's rendered file). No parameter
   * is substituted into a supplier's file, but a feed can echo a credential
   * of the run (an API that lists its own links with `?apikey=`): masked like
   * any other kept file. `searched`: the search made as the file was hashed.
   */
  async addSource(localPath: string, name: string, searched?: SecretSearch): Promise<void> {
    if (!this.full) return;
    const target = path.join("source", path.basename(name));
    await this.keep(localPath, target, "it is not the file as read or written, byte for byte", searched);
  }

  /** A bulk file or order body as it goes to the service: in a live run it is not kept, since it carries the real values. */
  async addBulkFile(localPath: string, name: string, searched?: SecretSearch): Promise<void> {
    if (!this.full) return;
    await this.keep(localPath, name, "it cannot be sent as is", searched);
  }

  private async keep(localPath: string, name: string, consequence: string, searched?: SecretSearch): Promise<void> {
    const values = await keepMasked(localPath, path.join(this.folder, name), searched);
    this.names.add(name);
    if (values > 0) this.maskedFiles.push({ file: name, values, note: `${name}: ${count(values, "value")} masked; ${consequence}` });
  }

  /** The kept files that had secrets masked, in the order they were kept. */
  get masked(): readonly MaskedFile[] {
    return this.maskedFiles;
  }

  /** A CSV file of rows with these columns (an undo's conflicts.csv), kept in live runs too. */
  async addTable(name: string, columns: readonly string[], rows: ReadonlyArray<Record<string, string>>): Promise<void> {
    const writer = await this.writer(name, [...columns]);
    try {
      for (const row of rows) {
        const masked: Record<string, string> = {};
        for (const c of columns) masked[c] = maskSecrets(row[c] ?? "");
        await writer.write(masked);
      }
    } finally {
      await writer.close();
    }
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
