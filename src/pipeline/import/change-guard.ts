/**
 * The change limits of a product import (`change_limits`, issue #33): while
 * the plan is made, a tally counts per field the updates that set a value to
 * zero or empty and those that move a number by more than the limit's
 * percentage, keeping only counters and the first few examples; the guards
 * then weigh the counts against the records in scope.
 *
 * @module
 */

import type { ChangeLimits, FieldChangeLimit, Limit } from "../../definition/index.js";
import type { PlannedOp } from "../planned-op.js";
import type { GuardTrip } from "../run-context.js";

/** Examples kept per field and check: enough for a person to recognise the pattern, few enough to keep memory flat. */
const EXAMPLES = 5;

/**
 * A share never allows fewer records than this: in a catalogue of a dozen
 * products, three selling out on one night is a busy day, not a broken feed.
 */
const SHARE_FLOOR = 5;

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

export interface ChangeExample {
  identifier: string;
  before: string;
  after: string;
}

export interface ChangeCount {
  field: string;
  check: "zeroed" | "moved";
  count: number;
  examples: ChangeExample[];
}

interface Counter {
  limit: FieldChangeLimit;
  zeroed: ChangeCount;
  moved: ChangeCount;
}

function isZeroOrEmpty(value: string): boolean {
  const t = value.trim();
  return t === "" || (DECIMAL.test(t) && Number(t) === 0);
}

function add(count: ChangeCount, identifier: string, before: string, after: string): void {
  count.count++;
  if (count.examples.length < EXAMPLES) count.examples.push({ identifier, before, after });
}

export class ChangeTally {
  private readonly counters = new Map<string, Counter>();

  /** `fields`: those the file config sets; a limit on any other field has nothing to weigh. */
  constructor(limits: ChangeLimits, fields: readonly string[]) {
    for (const field of fields) {
      const limit = limits[field];
      if (!limit) continue;
      this.counters.set(field, { limit, zeroed: { field, check: "zeroed", count: 0, examples: [] }, moved: { field, check: "moved", count: 0, examples: [] } });
    }
  }

  /** The fields weighed: the scope must read them, or an update's value before is unknown. */
  get fields(): string[] {
    return [...this.counters.keys()];
  }

  /** Only updates change a value that was there; a create has none before it, a removal is remove_limit's. */
  note(op: PlannedOp): void {
    if (op.kind !== "update" || this.counters.size === 0) return;
    for (const change of op.changes) {
      const counter = this.counters.get(change.field);
      if (!counter || change.same === true || change.before === null) continue;
      const { before, after } = change;
      if (counter.limit.zeroed && isZeroOrEmpty(after) && !isZeroOrEmpty(before)) add(counter.zeroed, op.identifier, before, after);
      const moved = counter.limit.moved;
      if (!moved) continue;
      const b = before.trim();
      const a = after.trim();
      if (!DECIMAL.test(b) || !DECIMAL.test(a) || Number(b) === 0) continue;
      if ((Math.abs(Number(a) - Number(b)) / Math.abs(Number(b))) * 100 > moved.percent) add(counter.moved, op.identifier, before, after);
    }
  }

  counts(): ChangeCount[] {
    return [...this.counters.values()].flatMap((c) => [c.zeroed, c.moved]).filter((c) => c.count > 0);
  }
}

/** What the guard weighs: the tally's counts, the limits they are held to, the scope they are a share of. */
export interface ChangeFacts {
  counts: ChangeCount[];
  limits: ChangeLimits;
  /** Records in scope: the share's denominator, as remove_limit's. */
  scopeSize: number;
  /** `file_configs[0]`: where a person raises a limit. */
  at: string;
}

function describe(limit: Limit): string {
  return limit.kind === "count" ? String(limit.value) : `${Math.round(limit.value * 1000) / 10}%`;
}

function allowed(limit: Limit, scope: number): number {
  return limit.kind === "count" ? limit.value : Math.max(SHARE_FLOOR, Math.floor(limit.value * scope));
}

function percent(count: number, total: number): string {
  return `${total ? Math.round((count / total) * 1000) / 10 : 100}%`;
}

function tripped(count: ChangeCount, facts: ChangeFacts): string | null {
  const limits = facts.limits[count.field];
  const limit = count.check === "zeroed" ? limits?.zeroed : limits?.moved?.share;
  if (!limit || count.count <= allowed(limit, facts.scopeSize)) return null;
  const of = `${count.count} of the ${facts.scopeSize} records in scope (${percent(count.count, facts.scopeSize)})`;
  const what =
    count.check === "zeroed"
      ? `${count.field} would go to zero or empty on ${of}, over ${facts.at}.change_limits.${count.field}.zeroed ${describe(limit)}`
      : `${count.field} would move by more than ${limits?.moved?.percent ?? 0}% on ${of}, over ${facts.at}.change_limits.${count.field}.share ${describe(limit)}`;
  const shown = count.examples.map((e) => `${e.identifier} ${e.before.trim() || "(empty)"} → ${e.after.trim() || "(empty)"}`).join(", ");
  const more = count.count > count.examples.length ? `, and ${count.count - count.examples.length} more` : "";
  return `${what} (${shown}${more})`;
}

/** The change limits a plan breaks, in one message; null when it breaks none or the run is forced. */
export function checkChangeLimits(facts: ChangeFacts, force: boolean): GuardTrip | null {
  if (force) return null;
  const broken = facts.counts.flatMap((c) => {
    const message = tripped(c, facts);
    return message === null ? [] : [{ field: c.field, message }];
  });
  if (broken.length === 0) return null;
  const fields = [...new Set(broken.map((b) => b.field))];
  return {
    name: "change_limit",
    message:
      `${broken.map((b) => b.message).join("; ")}: nothing was written. ` +
      `A feed whose columns moved or that lost its values looks like this; check the supplier's file (plan.csv of a --debug run lists every change). ` +
      `If the changes are right, run again with --force (or force=1 on the run request); if such changes are normal for this feed, raise the limit in ${facts.at}.change_limits${fields.length === 1 ? `.${fields[0] ?? ""}` : ""}, or set it to false.`,
    forceable: true,
  };
}
