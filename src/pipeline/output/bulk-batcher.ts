/**
 * Cuts product operations into service bulk files (runs.md step 8): grouped
 * by service action and by the exact set of columns they carry, because a
 * blank cell in a bulk file resets a field, so a row must never carry a
 * column it does not mean to set. Each group is cut at `bulkRows`.
 *
 * @module
 */

import path from "node:path";
import { searchSecrets, type SecretSearch } from "../secret-search.js";
import { ByteSink } from "./byte-sink.js";
import { csvCell } from "./csv-cell.js";
import type { OpRow } from "./op-rows.js";
import type { OpKind } from "../planned-op.js";

export interface BulkFile {
  /** `bulk-<n>.csv`, numbered in the order files were started. */
  name: string;
  path: string;
  action: string;
  columns: string[];
  /** Data rows written. */
  rows: number;
  /** The search for the run's secrets made as the file was sealed (`searchSecrets`), which a debug run's copy of it can stand on. */
  searched?: SecretSearch;
}

export interface BulkBatcherOptions {
  /** ByteSink's `blocking`: on the writer thread. */
  blocking?: boolean;
  /**
   * Search each file for the run's secrets as it is sealed: on the writer
   * thread, where a debug run's copy would otherwise have each file read
   * again on the main thread at the end of its plan.
   */
  searchSealed?: boolean;
}

/** The service action of an operation's bulk file row; null for an operation no bulk file carries. */
export function bulkAction(kind: OpKind, action: string | null): string | null {
  return action !== null && (kind === "create" || kind === "update" || kind === "remove") ? action : null;
}

/** A data row of a bulk file, straight from the quoted cells: a million rows make no intermediate records. */
export function bulkLine(action: string, identifier: string, afterCells: readonly string[]): string {
  let line = `${csvCell(action)},${csvCell(identifier)}`;
  for (let i = 0; i < afterCells.length; i++) line += `,${afterCells[i] ?? ""}`;
  return `${line}\r\n`;
}

/** Writes one data row of a bulk file, CRLF-terminated, into its sink; a promise only when it has to wait. */
export interface RowLine {
  writeTo(sink: ByteSink): Promise<void> | undefined;
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
    private readonly options: BulkBatcherOptions = {},
  ) {}

  /**
   * Returns a promise only when it has to wait (a file opened, sealed or a
   * chunk written). `afterCells`: the new values already quoted.
   */
  add(op: OpRow, afterCells: readonly string[]): Promise<void> | undefined {
    const action = bulkAction(op.kind, op.action);
    if (action === null) return undefined;
    const text = bulkLine(action, op.identifier, afterCells);
    return this.row(action, op.columns, { writeTo: (sink) => sink.write(text) });
  }

  /** One data row, written by `line` into the file of its action and column set; a promise only when it has to wait. */
  row(action: string, columns: readonly string[], line: RowLine): Promise<void> | undefined {
    const key = this.groupKey(action, columns);
    const group = this.groups.get(key);
    if (!group) return this.open(action, [...columns]).then((g) => {
      this.groups.set(key, g);
      return this.append(key, g, line);
    });
    return this.append(key, group, line);
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

  private append(key: string, group: OpenGroup, line: RowLine): Promise<void> | undefined {
    const written = line.writeTo(group.sink);
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
    const sink = await ByteSink.open(file.path, { size: BUFFER_BYTES, blocking: this.options.blocking ?? false });
    await sink.write(csvLine(["action", this.identifierField, ...columns]));
    return { file, sink };
  }

  private async seal(group: OpenGroup): Promise<void> {
    await group.sink.close();
    if (this.options.searchSealed) group.file.searched = await searchSecrets(group.file.path);
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
