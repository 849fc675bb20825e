// The shape of a planned operation: what the import's planners produce, and
// what the writer thread, plan.csv and the bulk files (output/) and the debug
// files write. It sits beside them rather than in import/ so that output/ and
// the run's bookkeeping never import from a direction.

export type ProductAction = "start" | "add" | "edit" | "relist" | "end" | "delete";
export type OrderAction = "create" | "update" | "archive";
export type OpKind = "create" | "update" | "remove" | "unchanged" | "skipped";

export interface FieldChange {
  field: string;
  before: string | null;
  after: string;
  /** The service holds this value already (read in the scope, equal as `sameValue` compares): plan.csv says `same`. */
  same?: boolean;
}

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
