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

/**
 * A create as the product planner makes it: the fields it sets, in order, and
 * the mapped record that holds their values. The writer reads the values from
 * the record (OpPageEncoder), so `changes` is built only where something else
 * asks for it: a first load made a FieldChange for every field of every row,
 * which nothing but the writer read.
 */
export class PlannedCreate implements PlannedOp {
  readonly kind = "create";
  readonly reason = undefined;
  private built: FieldChange[] | null = null;

  constructor(
    readonly action: ProductAction,
    readonly identifier: string,
    readonly line: number,
    /** Shared by the creates that set the same fields; never changed once made. */
    readonly fields: readonly string[],
    readonly values: Readonly<Record<string, string>>,
  ) {}

  get changes(): FieldChange[] {
    this.built ??= this.fields.map((field) => ({ field, before: null, after: this.values[field] ?? "" }));
    return this.built;
  }
}
