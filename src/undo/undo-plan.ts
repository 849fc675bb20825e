/**
 * The plan of an undo, record by record: what the journal says the run did,
 * against what the service holds now. A field whose value is no longer the
 * one the run set was changed since (by a later run or a person): it is left
 * alone and listed as a conflict, unless forced.
 *
 * @module
 */

import type { FieldChange, PlannedOp, ProductAction } from "../pipeline/planned-op.js";
import type { JournalEntry } from "./journal-entry.js";

export interface Conflict {
  identifier: string;
  field: string;
  /** The value before the run (what an undo restores). */
  before: string;
  /** The value the run set. */
  after: string;
  /** The value the service holds now. */
  now: string;
}

export interface UndoPlanOptions {
  /** The automation's `remove` action for what the run created (`end` when it has none). */
  remove: ProductAction;
  identifierField: string;
  force: boolean;
  /** `--field`: only these fields are restored (null: all). */
  fields: ReadonlySet<string> | null;
}

/** Fields the service sets itself: never sent back when a deleted record is created again. */
const SERVICE_FIELDS = new Set(["id", "date", "dateupdated", "listed"]);

/**
 * The operation that takes back one journal entry, given the record as the
 * service holds it now (undefined: it no longer exists), or null when there
 * is nothing to take back. Conflicts go to `conflicts`.
 */
export function undoOp(entry: JournalEntry, now: Record<string, string> | undefined, options: UndoPlanOptions, conflicts: Conflict[]): PlannedOp | null {
  const identifier = entry.i;
  if (entry.a === "add" || entry.a === "start") {
    // What the run created goes as the automation removes records.
    if (now === undefined) return null;
    return { kind: "remove", action: options.remove, identifier, line: null, changes: [] };
  }
  if (entry.a === "end" || entry.a === "delete") return takeBackRemoval(entry, now, options);
  // An undo relisted what a run ended: its undo ends it again. (An import's `update: relist` also sets fields; those go back below.)
  if (entry.a === "relist" && (entry.f ?? []).length === 0) {
    if (now === undefined || now.listed === "0") return null;
    return { kind: "remove", action: "end", identifier, line: null, changes: [] };
  }
  const changes: FieldChange[] = [];
  for (const [field, before, after] of entry.f ?? []) {
    if (options.fields && !options.fields.has(field)) continue;
    const restore = before ?? "";
    const current = now === undefined ? null : (now[field] ?? "");
    if (current === restore) continue;
    if (current !== after && !options.force) {
      conflicts.push({ identifier, field, before: restore, after, now: current ?? "(the record no longer exists)" });
      continue;
    }
    if (now === undefined) continue;
    changes.push({ field, before: current, after: restore });
  }
  if (changes.length === 0) return null;
  return { kind: "update", action: "edit", identifier, line: null, changes };
}

/** A record the run ended is relisted; one it deleted is created again from the record the run read. */
function takeBackRemoval(entry: JournalEntry, now: Record<string, string> | undefined, options: UndoPlanOptions): PlannedOp | null {
  const identifier = entry.i;
  // Ended already when the run read it (a scope that holds ended records ends them again): nothing to put back on sale.
  if (entry.a === "end" && entry.r?.listed === "0") return null;
  if (now !== undefined) {
    // Still there (ended, or made again since): relisted unless it is listed already.
    if (entry.a === "delete" || now.listed === "1") return null;
    return { kind: "update", action: "relist", identifier, line: null, changes: [] };
  }
  const record = entry.r;
  if (!record) return null;
  const changes: FieldChange[] = [];
  for (const [field, value] of Object.entries(record)) {
    if (field === options.identifierField || SERVICE_FIELDS.has(field) || value === "") continue;
    changes.push({ field, before: null, after: value });
  }
  return { kind: "create", action: record.listed === "0" ? "add" : "start", identifier, line: null, changes };
}
