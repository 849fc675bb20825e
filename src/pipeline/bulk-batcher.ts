import path from "node:path";
import { ByteSink } from "./byte-sink.js";
import { csvCell } from "./csv-cell.js";
import type { OpRow } from "./op-rows.js";

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
  /** Data rows written. */
  rows: number;
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
  private lastKey: { action: string; fields: readonly string[]; key: string } | null = null;

  constructor(
    private readonly folder: string,
    private readonly identifierField: string,
    private readonly bulkRows: number,
  ) {}

  /**
   * Returns a promise only when it has to wait (a file opened, sealed or a
   * chunk written). `afterCells`: the new values already quoted.
   */
  add(op: OpRow, afterCells: readonly string[]): Promise<void> | undefined {
    if (!op.action || (op.kind !== "create" && op.kind !== "update" && op.kind !== "remove")) return undefined;
    const key = this.groupKey(op.action, op.columns);
    const group = this.groups.get(key);
    if (!group) return this.open(op.action, [...op.columns]).then((g) => {
      this.groups.set(key, g);
      return this.append(key, g, op, afterCells);
    });
    return this.append(key, group, op, afterCells);
  }

  /**
   * The action and the column set, as one key. Most operations in a row
   * carry the same fields as the one before, so that key is used again
   * rather than built per row: a million keys of a dozen joined names were
   * a gigabyte of garbage.
   */
  private groupKey(action: string, columns: readonly string[]): string {
    const last = this.lastKey;
    if (last && last.action === action && (last.fields === columns || (last.fields.length === columns.length && columns.every((c, i) => c === last.fields[i])))) return last.key;
    const key = [action, ...columns].join("\u0000");
    this.lastKey = { action, fields: columns, key };
    return key;
  }

  private append(key: string, group: OpenGroup, op: OpRow, afterCells: readonly string[]): Promise<void> | undefined {
    // One line per row, straight from the quoted cells: a million rows make no intermediate records.
    let line = `${csvCell(op.action ?? "")},${csvCell(op.identifier)}`;
    for (let i = 0; i < afterCells.length; i++) line += `,${afterCells[i] ?? ""}`;
    const written = group.sink.write(`${line}\r\n`);
    if (++group.file.rows >= this.bulkRows) {
      this.groups.delete(key);
      return written ? written.then(() => this.seal(group)) : this.seal(group);
    }
    return written;
  }

  private async open(action: string, columns: string[]): Promise<OpenGroup> {
    this.count += 1;
    const name = `bulk-${this.count}.csv`;
    const file: BulkFile = { name, path: path.join(this.folder, name), action, columns, rows: 0 };
    const sink = await ByteSink.open(file.path, { size: BUFFER_BYTES });
    await sink.write(csvLine(["action", this.identifierField, ...columns]));
    return { file, sink };
  }

  private async seal(group: OpenGroup): Promise<void> {
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
