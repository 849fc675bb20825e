/**
 * Field comparison for both kinds of diffing (runs.md, "Diffing"): strings
 * trimmed, numbers equal within a tolerance. Identifiers never reach here as
 * numbers: a value is numeric only when it is a plain decimal.
 *
 * @module
 */

import type { FieldChange } from "../planned-op.js";

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

export function sameValue(a: string | null | undefined, b: string | null | undefined, tolerance = 0): boolean {
  const x = (a ?? "").trim();
  const y = (b ?? "").trim();
  if (x === y) return true;
  if (DECIMAL.test(x) && DECIMAL.test(y)) return Math.abs(Number(x) - Number(y)) <= tolerance;
  return false;
}

export interface DiffOptions {
  /** Run diff: the values this automation last applied; undefined = a full run or a record never sent. */
  snapshot?: Record<string, string> | undefined;
  /** Live diff (`diff_update`): the values the service holds now. */
  live?: { values: Record<string, string>; fields: ReadonlySet<string> | null; tolerance: number } | undefined;
  /** Where the "before" of a change comes from: the service's record when read, else the snapshot. */
  before?: Record<string, string> | undefined;
  /**
   * Run diff: a field whose value the service holds already is dropped too, as one equal to the snapshot is.
   * Only the fields the scope read are known; a debug diff run reads the same fields as a live one.
   */
  dropSame?: boolean | ReadonlySet<string> | null;
}

/** `true` or `null`: any field held already is dropped; a set: only its fields; `false`/absent: none. */
function dropsSame(rule: DiffOptions["dropSame"], field: string): boolean {
  if (rule === undefined || rule === false) return false;
  return rule === true || rule === null || rule.has(field);
}

/**
 * The fields an update carries, each marked `same` when the service's value
 * (when the scope read it) is the new one. Run diff drops fields equal to the
 * snapshot, and those marked `same`.
 * Live diff compares the `diff_fields` (all fields when none are named) with
 * the service: equal ones are dropped, and when none of them differs the
 * fields outside `diff_fields` are dropped too, so an unchanged record is
 * never sent just because it carries an uncompared field.
 */
export function changedFields(values: Record<string, string>, fields: readonly string[], options: DiffOptions): FieldChange[] {
  let keep = fields.filter((f) => !(options.snapshot && f in options.snapshot && sameValue(options.snapshot[f], values[f])));
  const live = options.live;
  if (live) {
    const compared = (f: string): boolean => live.fields === null || live.fields.has(f);
    const differs = (f: string): boolean => !sameValue(live.values[f], values[f], live.tolerance);
    const anyCompared = keep.some((f) => compared(f) && differs(f));
    keep = keep.filter((f) => (compared(f) ? differs(f) : anyCompared));
  }
  const service = options.before;
  const changes: FieldChange[] = [];
  for (const field of keep) {
    const after = values[field] ?? "";
    const held = service?.[field];
    // Most fields of a full run's update are the service's exact text: compared without trimming first.
    const same = held !== undefined && (held === after || sameValue(held, after));
    if (same && dropsSame(options.dropSame, field)) continue;
    changes.push({ field, before: held ?? options.snapshot?.[field] ?? null, after, same });
  }
  return changes;
}
