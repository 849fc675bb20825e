import path from "node:path";
import { csvField } from "../formats/index.js";
import { FileSink } from "../formats/sink.js";
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
  identifiers: string[];
}

interface OpenGroup {
  file: BulkFile;
  sink: FileSink;
}

/** The same CSV as every file the worker writes (openWriter's csv): quoted where needed, CRLF. */
function csvLine(values: readonly string[]): string {
  let line = "";
  for (let i = 0; i < values.length; i++) line += (i === 0 ? "" : ",") + csvField(values[i] ?? "", ",", '"');
  return `${line}\r\n`;
}

export class BulkBatcher {
  private readonly groups = new Map<string, OpenGroup>();
  private readonly done: BulkFile[] = [];
  private count = 0;

  constructor(
    private readonly folder: string,
    private readonly identifierField: string,
    private readonly bulkRows: number,
  ) {}

  async add(op: PlannedOp): Promise<void> {
    if (!op.action || (op.kind !== "create" && op.kind !== "update" && op.kind !== "remove")) return;
    const columns = op.changes.map((c) => c.field);
    const key = `${op.action}\u0000${columns.join("\u0000")}`;
    let group = this.groups.get(key);
    if (!group) {
      group = await this.open(op.action, columns);
      this.groups.set(key, group);
    }
    // One line per row, straight from the changes: a million rows make no intermediate records.
    const values = [op.action, op.identifier];
    for (const change of op.changes) values.push(change.after);
    await group.sink.write(csvLine(values));
    group.file.identifiers.push(op.identifier);
    if (group.file.identifiers.length >= this.bulkRows) {
      this.groups.delete(key);
      await this.seal(group);
    }
  }

  private async open(action: string, columns: string[]): Promise<OpenGroup> {
    this.count += 1;
    const name = `bulk-${this.count}.csv`;
    const file: BulkFile = { name, path: path.join(this.folder, name), action, columns, identifiers: [] };
    const sink = await FileSink.open(file.path);
    await sink.write(csvLine(["action", this.identifierField, ...columns]));
    return { file, sink };
  }

  private async seal(group: OpenGroup): Promise<void> {
    await group.sink.close();
    this.done.push(group.file);
  }

  /** Closes every open file; the files in the order they were started. */
  async finish(): Promise<BulkFile[]> {
    for (const group of this.groups.values()) await this.seal(group);
    this.groups.clear();
    return [...this.done].sort((a, b) => Number(a.name.slice(5, -4)) - Number(b.name.slice(5, -4)));
  }
}
