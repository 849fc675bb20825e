/**
 * The debug CSV files the viewer pages through, and what a row of each is.
 * plan.csv (op-rows.ts): `operation,action,identifier,field,before,after,change`,
 * one line per field an operation sets; a line that names no field (a skip,
 * a removal without fields) carries its reason in `after`. errors.csv
 * (debug-files.ts): `line,identifier,message`, `line` being the feed's line.
 *
 * @module
 */

import { PLAN_HEADER } from "../../pipeline/output/op-rows.js";

export type TableName = "plan.csv" | "errors.csv";

export const PLAN_COLUMNS = PLAN_HEADER.trim().split(",");
export const ERROR_COLUMNS = ["line", "identifier", "message"];

export function columnsOf(name: TableName): string[] {
  return name === "plan.csv" ? PLAN_COLUMNS : ERROR_COLUMNS;
}

/** A planned change; `line` is its row in plan.csv (1 = the first line after the header). */
export interface PlanRow {
  line: number;
  operation: string;
  action: string;
  identifier: string;
  field: string;
  before: string;
  after: string;
  /** `new`, `changed`, `same` (op-rows.ts), empty on a line without a field. */
  change: string;
  /** Why a line names no field (a skipped record). */
  reason?: string;
}

/** A row error; `row` is its row in errors.csv, `line` the feed's line it came from (null when none: a record the service refused). */
export interface ErrorRow {
  row: number;
  line: number | null;
  identifier: string;
  message: string;
}

/**
 * What the viewer's action filter and counts call a line's action: the
 * service action (`add`, `edit`, `end`…) where the line has one, its
 * operation (`skipped`) where it has none.
 */
export function actionLabel(operation: string, action: string): string {
  return action !== "" ? action : operation;
}

export function planRow(values: readonly string[], line: number): PlanRow {
  const [operation = "", action = "", identifier = "", field = "", before = "", after = "", change = ""] = values;
  if (field === "") return { line, operation, action, identifier, field, before, after: "", change, reason: after };
  return { line, operation, action, identifier, field, before, after, change };
}

export function errorRow(values: readonly string[], row: number): ErrorRow {
  const [line = "", identifier = "", message = ""] = values;
  return { row, line: /^\d+$/.test(line) ? Number(line) : null, identifier, message };
}

/** Which planned changes a page shows; `identifier` ending in `*` matches as a prefix. */
export interface PlanFilter {
  action?: string | undefined;
  field?: string | undefined;
  identifier?: string | undefined;
}

export function hasFilter(f: PlanFilter): boolean {
  return Boolean(f.action || f.field || f.identifier);
}

/** A test on a line's first four values (operation, action, identifier, field). */
export function planMatcher(f: PlanFilter): (values: readonly string[]) => boolean {
  const id = f.identifier ?? "";
  const prefix = id.endsWith("*");
  const wanted = prefix ? id.slice(0, -1) : id;
  return (v) => {
    if (f.action && actionLabel(v[0] ?? "", v[1] ?? "") !== f.action) return false;
    if (f.field && (v[3] ?? "") !== f.field) return false;
    if (id === "") return true;
    const identifier = v[2] ?? "";
    return prefix ? identifier.startsWith(wanted) : identifier === wanted;
  };
}
