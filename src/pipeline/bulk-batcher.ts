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
 * A file's row identifiers as one string joined by a separator no identifier
 * holds (U+0000): a million identifiers in 200 strings instead of a million
 * string objects the collector walks through for the whole apply.
 */
export class BulkIdentifiers {
  private text = "";
  /** Identifiers joined into `text`. */
  private joined = 0;
  private parts: string[] = [];
  private list: string[] | null = null;

  get length(): number {
    return this.list ? this.list.length : this.joined + this.parts.length;
  }

  push(identifier: string): void {
    if (!this.list && identifier.includes("\u0000")) this.list = this.toArray();
    if (this.list) {
      // The rare identifier holding the separator: this file keeps a plain array.
      this.list.push(identifier);
      return;
    }
    this.parts.push(identifier);
    // Joined every few thousand so the array of small strings never grows long.
    if (this.parts.length >= 4096) this.seal();
  }

  /**
   * Joins what is pending. An identifier cut out of the parser's chunk keeps
   * the whole chunk (a megabyte) alive, so a finished file holds none of them.
   */
  seal(): void {
    if (this.parts.length === 0) return;
    this.text += (this.joined > 0 ? "\u0000" : "") + this.parts.join("\u0000");
    this.joined += this.parts.length;
    this.parts = [];
  }

  /** The identifiers as an array, built on demand (the apply of one file) and not kept. */
  toArray(): string[] {
    if (this.list) return this.list;
    this.seal();
    return this.joined === 0 ? [] : this.text.split("\u0000");
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

  /** Returns a promise only when it has to wait (a file opened, sealed or a chunk written). */
  add(op: PlannedOp): Promise<void> | undefined {
    if (!op.action || (op.kind !== "create" && op.kind !== "update" && op.kind !== "remove")) return undefined;
    let key = op.action;
    for (const change of op.changes) key += `\u0000${change.field}`;
    const group = this.groups.get(key);
    if (!group) return this.open(op.action, op.changes.map((c) => c.field)).then((g) => {
      this.groups.set(key, g);
      return this.append(key, g, op);
    });
    return this.append(key, group, op);
  }

  private append(key: string, group: OpenGroup, op: PlannedOp): Promise<void> | undefined {
    // One line per row, straight from the changes: a million rows make no intermediate records.
    let line = `${csvCell(op.action ?? "")},${csvCell(op.identifier)}`;
    for (const change of op.changes) line += `,${csvCell(change.after)}`;
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
