/**
 * The guards of an import (runs.md step 7): they stop a run before anything is
 * written. Pure: counts in, the first guard that trips out.
 *
 * @module
 */

import type { GuardTrip } from "../run-context.js";
import { checkChangeLimits, type ChangeFacts } from "./change-guard.js";

export type Limit = { kind: "count"; value: number } | { kind: "share"; value: number };

export interface GuardInput {
  /** Data rows read, the failed ones included. */
  rows: number;
  /** Rows that failed to read or map (a subset of `rows`). */
  rowErrors: number;
  removals: number;
  scopeSize: number;
  removeConfigured: boolean;
  /** Where a file ends inside a bad record, when one does (ReadCounts.cutAt). */
  cutAt?: string | null;
  /** The first row error (ReadCounts.firstError), quoted when error_limit stops the run. */
  firstError?: string | null;
  removeLimit: Limit;
  errorLimit: Limit;
  /** A product pass's change counts and limits (change_limits); none for orders and bulk files. */
  changes?: ChangeFacts | undefined;
  force: boolean;
}

function describeLimit(limit: Limit): string {
  return limit.kind === "count" ? String(limit.value) : `${Math.round(limit.value * 1000) / 10}%`;
}

function allowed(limit: Limit, total: number): number {
  return limit.kind === "count" ? limit.value : Math.floor(limit.value * total);
}

const FORCE_HINT = "If this is intended, run again with --force (or force=1 on the run request).";

export function checkGuards(input: GuardInput): GuardTrip | null {
  if (input.rows === 0 && input.removeConfigured) {
    return {
      name: "empty_feed",
      message: `the feed has no data rows and remove is set: nothing was written, so that an empty or truncated file never removes the catalogue. Check the supplier's file.`,
      forceable: false,
    };
  }
  // A cut file lost the records after the cut: remove would take them away, however few they are.
  if (input.cutAt && input.removeConfigured && !input.force) {
    return {
      name: "cut_feed",
      message: `the file ends inside the record at ${input.cutAt}, so it looks cut short, and remove is set: nothing was written, so that the records lost in the cut are not removed. Check the supplier's file; if it is complete as it is, run again with --force (or force=1 on the run request).`,
      forceable: true,
    };
  }
  const total = input.rows;
  if (total > 0 && input.rowErrors > allowed(input.errorLimit, total)) {
    const share = Math.round((input.rowErrors / total) * 1000) / 10;
    if (!input.force)
      return {
        name: "error_limit",
        message: `${input.rowErrors} of ${total} rows (${share}%) failed to read or map, over error_limit ${describeLimit(input.errorLimit)}: nothing was written.${input.firstError ? ` The first: ${input.firstError.replace(/\.$/, "")}.` : ""} errors.csv among the run's debug files lists all of them. ${FORCE_HINT}`,
        forceable: true,
      };
  }
  if (input.removals > allowed(input.removeLimit, input.scopeSize)) {
    const share = input.scopeSize ? Math.round((input.removals / input.scopeSize) * 1000) / 10 : 100;
    if (!input.force)
      return {
        name: "remove_limit",
        message: `the run would remove ${input.removals} of ${input.scopeSize} records in scope (${share}%), over remove_limit ${describeLimit(input.removeLimit)}: nothing was written. ${FORCE_HINT}`,
        forceable: true,
      };
  }
  return input.changes ? checkChangeLimits(input.changes, input.force) : null;
}
