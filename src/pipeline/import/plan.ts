/**
 * The plan (runs.md step 6): for each record, what the run will do, as plain
 * data. Debug mode writes it out; a live run applies exactly this.
 *
 * @module
 */

import { PlannedCreate, type FieldChange, type OpKind, type PlannedOp, type ProductAction } from "../planned-op.js";
import { changedFields } from "./diff.js";

export interface ProductPlanConfig {
  identifier: string;
  create?: ProductAction | undefined;
  update?: ProductAction | undefined;
  remove?: ProductAction | undefined;
  /** `diff_update`: the fields compared with the service (null: every mapped field), and the tolerance. */
  liveDiff?: { fields: ReadonlySet<string> | null; tolerance: number } | undefined;
  /**
   * The fields a run diff may drop as `same`: those the scope reads for matching, diffing, actions and limits
   * (null: every field). The undo journal's wider read of a live run must not send less than its debug run plans.
   */
  dropSame?: ReadonlySet<string> | null;
}

export interface ProductPlanInput {
  identifier: string;
  line: number;
  values: Record<string, string>;
  /** Fields the actions told us to leave alone (`ignoreValue`). */
  ignored: ReadonlySet<string>;
  /** The record as the service holds it, when it is in scope. */
  service: Record<string, string> | undefined;
  /** Run diff: what this automation last applied for the identifier. */
  snapshot: Record<string, string> | undefined;
  /** A run diff: fields the service holds already are dropped, as those equal to the snapshot are. */
  diff?: boolean;
  /** The planner's list of the fields its creates set, shared from one create to the next. */
  createdFields?: CreatedFields;
}

/** Every operation is built with the same properties in the same order: one object shape for a million of them. */
function op(kind: OpKind, action: ProductAction | null, input: ProductPlanInput, changes: FieldChange[], reason?: string): PlannedOp {
  return { kind, action, identifier: input.identifier, line: input.line, changes, reason };
}

/** A field the operation may set: any mapped field but the identifier and those the actions said to leave alone. */
function settable(field: string, config: ProductPlanConfig, ignored: ReadonlySet<string>): boolean {
  return field !== config.identifier && (ignored.size === 0 || !ignored.has(field));
}

// Fields are walked with for...in, not Object.keys: a record has no prototype, so both give its own fields in the
// same order, and inside a for...in V8 reads `values[field]` from the record's layout instead of looking the name
// up, which makes planning many creates markedly faster.
export function planProduct(config: ProductPlanConfig, input: ProductPlanInput): PlannedOp {
  const { values, ignored } = input;
  if (input.service) {
    if (!config.update) return op("skipped", null, input, [], "in scope, and the file config has no update");
    const fields: string[] = [];
    for (const field in values) if (settable(field, config, ignored)) fields.push(field);
    const changes = changedFields(values, fields, {
      snapshot: input.snapshot,
      live: config.liveDiff ? { values: input.service, ...config.liveDiff } : undefined,
      before: input.service,
      dropSame: input.diff === true ? (config.dropSame ?? null) : false,
    });
    if (changes.length === 0) return op("unchanged", null, input, changes);
    return op("update", config.update, input, changes);
  }
  if (!config.create) return op("skipped", null, input, [], "not in scope, and the file config has no create");
  const fields = (input.createdFields ?? new CreatedFields()).of(values, config, ignored);
  return new PlannedCreate(config.create, input.identifier, input.line, fields, values);
}

/**
 * The field list of the creates planned last. A feed's records mostly set
 * the same fields in the same order, so one list serves them all: each
 * record's fields are compared with it in place, and a list is made only
 * when they differ.
 */
export class CreatedFields {
  private last: readonly string[] = [];

  of(values: Record<string, string>, config: ProductPlanConfig, ignored: ReadonlySet<string>): readonly string[] {
    const last = this.last;
    let count = 0;
    let same = true;
    for (const field in values) {
      if (!settable(field, config, ignored)) continue;
      if (same && last[count] !== field) same = false;
      count++;
    }
    if (same && count === last.length) return last;
    const fields: string[] = [];
    for (const field in values) if (settable(field, config, ignored)) fields.push(field);
    this.last = fields;
    return fields;
  }
}

export function planRemoval(config: ProductPlanConfig, identifier: string): PlannedOp | null {
  if (!config.remove) return null;
  return { kind: "remove", action: config.remove, identifier, line: null, changes: [] };
}

export interface PlanCounts {
  create: number;
  update: number;
  unchanged: number;
  remove: number;
  skipped: number;
}

/** RunCounts' figures of fields planned with the value the service holds already (plan.csv's `same`). */
export interface SameCounts {
  /** Fields marked `same`. */
  same_fields: number;
  /** Updates whose every field is `same`: sent all the same by a full run, `unchanged` in a diff run. */
  same: number;
}

export function countOp(counts: PlanCounts, op: PlannedOp): void {
  counts[op.kind] += 1;
}

/** Adds an operation's `same` fields; only an update has any (a create's fields have no value before). */
export function countSame(counts: SameCounts, op: PlannedOp): void {
  if (op.kind !== "update") return;
  const { changes } = op;
  let same = 0;
  for (let i = 0; i < changes.length; i++) if (changes[i]?.same === true) same++;
  if (same === 0) return;
  counts.same_fields += same;
  if (same === changes.length) counts.same += 1;
}
