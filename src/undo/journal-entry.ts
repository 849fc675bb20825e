/**
 * One line of an undo journal: what a live product import did to one record,
 * with what it takes to take it back. Stored as gzip'd JSON lines in chunks
 * (the `undo_journal` table), with short keys: a million changed fields must
 * stay within tens of megabytes.
 *
 * @module
 */

import { gunzipSync, gzipSync } from "node:zlib";
import { ConveyorError } from "../errors.js";
import type { PlannedOp, ProductAction } from "../pipeline/planned-op.js";

/** A field the run set: [field, value before (null: the service had none), value after]. */
export type JournalField = [string, string | null, string];

export interface JournalEntry {
  /** The index of the file config whose pass made the change (its identifier field and `remove` action). */
  c: number;
  /** The record's identifier. */
  i: string;
  /** The service action the run sent. */
  a: ProductAction;
  /** Update: the fields it set, with before and after. */
  f?: JournalField[];
  /** End or delete: the record as the scope read it, to relist or re-create it. */
  r?: Record<string, string>;
}

/** The journal's entry for a planned operation, or null when the operation changes nothing. */
export function entryOf(config: number, op: PlannedOp, removed: Record<string, string> | undefined): JournalEntry | null {
  if (op.action === null || op.kind === "unchanged" || op.kind === "skipped") return null;
  const action = op.action as ProductAction;
  if (op.kind === "create") return { c: config, i: op.identifier, a: action };
  if (op.kind === "remove") return removed ? { c: config, i: op.identifier, a: action, r: removed } : { c: config, i: op.identifier, a: action };
  const fields: JournalField[] = [];
  for (const change of op.changes) if (change.same !== true) fields.push([change.field, change.before, change.after]);
  // An update that sends only values the service holds already (a full run does) changes nothing to take back.
  if (fields.length === 0 && action === "edit") return null;
  return { c: config, i: op.identifier, a: action, f: fields };
}

/** One entry as its line of a chunk. */
export function entryLine(entry: JournalEntry): string {
  return JSON.stringify(entry);
}

export function encodeChunk(lines: readonly string[]): Buffer {
  return gzipSync(lines.join("\n"), { level: 6 });
}

export function decodeChunk(body: Buffer, where: string): JournalEntry[] {
  let text: string;
  try {
    text = gunzipSync(body).toString("utf8");
  } catch (err) {
    throw new ConveyorError("state", `the undo journal's ${where} cannot be read: ${(err as Error).message}`, { cause: err });
  }
  return text === "" ? [] : text.split("\n").map((line) => JSON.parse(line) as JournalEntry);
}
