import path from "node:path";
import { ByteSink } from "./byte-sink.js";
import { csvCell } from "./csv-cell.js";
import type { PlannedOp } from "./plan.js";

/**
 * Cuts product operations into service bulk files (runs.md step 8): grouped
 * by service action and by the exact set of columns they carry, because a
 * blank cell in a bulk file resets a field, so a row must never carry a
 * column it does not mean to set. Each group is cut at `bulkRows`.
 */
export interface BulkFile {
  /** `bulk-<n>.csv`, numbered in the order files were started. */
  name: string;
  path: string;
  action: string;
  columns: string[];
  /** The identifier of each data row, in order: result rows are matched back by position. */
  identifiers: BulkIdentifiers;
}

/**
 * A file's row identifiers, copied as UTF-8 into one growing buffer with a
 * NUL after each. An identifier is a slice of the parser's decoded chunk, and
 * a slice keeps its whole chunk (a megabyte) alive: a diff run's few changed
 * rows, one per chunk, kept hundreds of megabytes of feed text as long as
 * their file was open. The buffer also spares the collector a million small
 * strings during the apply.
 */
export class BulkIdentifiers {
  private bytes: Buffer = Buffer.allocUnsafe(16 * 1024);
  private used = 0;
  private count = 0;
  /** Only once an identifier holds a NUL: this file keeps a plain array. */
  private list: string[] | null = null;

  get length(): number {
    return this.list ? this.list.length : this.count;
  }

  push(identifier: string): void {
    if (!this.list && identifier.includes("\u0000")) this.list = this.toArray();
    if (this.list) {
      this.list.push(identifier);
      return;
    }
    const need = this.used + identifier.length * 3 + 1;
    if (need > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2));
      this.bytes.copy(bigger, 0, 0, this.used);
      this.bytes = bigger;
    }
    this.used += this.bytes.write(identifier, this.used);
    this.bytes[this.used++] = 0;
    this.count++;
  }

  /** Gives back the unused part of the buffer once the file is complete. */
  seal(): void {
    if (this.list || this.used === this.bytes.length) return;
    this.bytes = Buffer.from(this.bytes.subarray(0, this.used));
  }

  /** The identifiers as an array, built on demand (the apply of one file) and not kept. */
  toArray(): string[] {
    if (this.list) return this.list;
    if (this.count === 0) return [];
    return this.bytes.toString("utf8", 0, this.used - 1).split("\u0000");
  }

  [Symbol.iterator](): Iterator<string> {
    return this.toArray()[Symbol.iterator]();
  }
}

interface OpenGroup {
  file: BulkFile;
  sink: ByteSink;
}

/** Quoted where needed, CRLF: the CSV of openWriter. */
function csvLine(values: readonly string[]): string {
  let line = "";
  for (let i = 0; i < values.length; i++) line += (i === 0 ? "" : ",") + csvCell(values[i] ?? "");
  return `${line}\r\n`;
}

/** Per open file: a diff run may hold a group open for each combination of changed fields. */
const BUFFER_BYTES = 64 * 1024;

export class BulkBatcher {
  private readonly groups = new Map<string, OpenGroup>();
  private readonly done: BulkFile[] = [];
  private count = 0;

  constructor(
    private readonly folder: string,
    private readonly identifierField: string,
    private readonly bulkRows: number,
  ) {}

  /**
   * Returns a promise only when it has to wait (a file opened, sealed or a
   * chunk written). `afterCells`: the changes' new values already quoted.
   */
  add(op: PlannedOp, afterCells?: readonly string[]): Promise<void> | undefined {
    if (!op.action || (op.kind !== "create" && op.kind !== "update" && op.kind !== "remove")) return undefined;
    let key = op.action;
    for (const change of op.changes) key += `\u0000${change.field}`;
    const group = this.groups.get(key);
    if (!group) return this.open(op.action, op.changes.map((c) => c.field)).then((g) => {
      this.groups.set(key, g);
      return this.append(key, g, op, afterCells);
    });
    return this.append(key, group, op, afterCells);
  }

  private append(key: string, group: OpenGroup, op: PlannedOp, afterCells: readonly string[] | undefined): Promise<void> | undefined {
    // One line per row, straight from the changes: a million rows make no intermediate records.
    let line = `${csvCell(op.action ?? "")},${csvCell(op.identifier)}`;
    let i = 0;
    for (const change of op.changes) line += `,${afterCells?.[i++] ?? csvCell(change.after)}`;
    const written = group.sink.write(`${line}\r\n`);
    group.file.identifiers.push(op.identifier);
    if (group.file.identifiers.length >= this.bulkRows) {
      this.groups.delete(key);
      return written ? written.then(() => this.seal(group)) : this.seal(group);
    }
    return written;
  }

  private async open(action: string, columns: string[]): Promise<OpenGroup> {
    this.count += 1;
    const name = `bulk-${this.count}.csv`;
    const file: BulkFile = { name, path: path.join(this.folder, name), action, columns, identifiers: new BulkIdentifiers() };
    const sink = await ByteSink.open(file.path, BUFFER_BYTES);
    await sink.write(csvLine(["action", this.identifierField, ...columns]));
    return { file, sink };
  }

  private async seal(group: OpenGroup): Promise<void> {
    group.file.identifiers.seal();
    await group.sink.close();
    this.done.push(group.file);
  }

  /** Closes and forgets every file so far (their files are overwritten or left in the work folder): the plan is being made again. */
  async discard(): Promise<void> {
    for (const group of this.groups.values()) await group.sink.close();
    this.groups.clear();
    this.done.length = 0;
    this.count = 0;
  }

  /** Closes every open file; the files in the order they were started. */
  async finish(): Promise<BulkFile[]> {
    for (const group of this.groups.values()) await this.seal(group);
    this.groups.clear();
    return [...this.done].sort((a, b) => Number(a.name.slice(5, -4)) - Number(b.name.slice(5, -4)));
  }
}
