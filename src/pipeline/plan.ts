import { changedFields, type FieldChange } from "./diff.js";

/**
 * The plan (runs.md step 6): for each record, what the run will do, as plain
 * data. Debug mode writes it out; a live run applies exactly this.
 */
export type ProductAction = "start" | "add" | "edit" | "relist" | "end" | "delete";
export type OrderAction = "create" | "update" | "archive";
export type OpKind = "create" | "update" | "remove" | "unchanged" | "skipped";

export interface PlannedOp {
  kind: OpKind;
  /** The service action; null for unchanged and skipped records. */
  action: ProductAction | OrderAction | null;
  identifier: string;
  /** Source line or element number; null for removals (the file does not mention them). */
  line: number | null;
  changes: FieldChange[];
  reason?: string;
}

export interface ProductPlanConfig {
  identifier: string;
  create?: ProductAction | undefined;
  update?: ProductAction | undefined;
  remove?: ProductAction | undefined;
  /** `diff_update`: the fields compared with the service (null: every mapped field), and the tolerance. */
  liveDiff?: { fields: ReadonlySet<string> | null; tolerance: number } | undefined;
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
}

export function planProduct(config: ProductPlanConfig, input: ProductPlanInput): PlannedOp {
  const base = { identifier: input.identifier, line: input.line };
  const fields = Object.keys(input.values).filter((f) => f !== config.identifier && !input.ignored.has(f));
  if (input.service) {
    if (!config.update) return { ...base, kind: "skipped", action: null, changes: [], reason: "in scope, and the file config has no update" };
    const changes = changedFields(input.values, fields, {
      snapshot: input.snapshot,
      live: config.liveDiff ? { values: input.service, ...config.liveDiff } : undefined,
      before: input.service,
    });
    if (changes.length === 0) return { ...base, kind: "unchanged", action: null, changes };
    return { ...base, kind: "update", action: config.update, changes };
  }
  if (!config.create) return { ...base, kind: "skipped", action: null, changes: [], reason: "not in scope, and the file config has no create" };
  const changes = fields.map((field) => ({ field, before: null, after: input.values[field] ?? "" }));
  return { ...base, kind: "create", action: config.create, changes };
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

export function countOp(counts: PlanCounts, op: PlannedOp): void {
  counts[op.kind] += 1;
}
