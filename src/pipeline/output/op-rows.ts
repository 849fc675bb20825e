import { stat } from "node:fs/promises";
import { hasSecret, maskSecrets } from "../../secrets.js";
import { ByteSink } from "./byte-sink.js";
import { csvCell as cell } from "./csv-cell.js";
import type { OpKind, PlannedOp } from "../planned-op.js";

/**
 * A planned operation as the files of a run see it (plan.csv, bulk files):
 * its fields as one column list shared by every operation that sets the same
 * fields, and their values side by side. The planner's `PlannedOp` holds an
 * object per field; the writer thread rebuilds none of them.
 */
export interface OpRow {
  kind: OpKind;
  action: string | null;
  identifier: string;
  reason: string | undefined;
  columns: readonly string[];
  after: readonly string[];
  /** The values before, "" where there was none; null when no field had one (a create). */
  before: readonly string[] | null;
  /** Per column, whether the service holds the new value already; null when none does. */
  same: readonly boolean[] | null;
}

export function opRow(op: PlannedOp): OpRow {
  const columns = op.changes.map((c) => c.field);
  const before = op.changes.some((c) => c.before !== null) ? op.changes.map((c) => c.before ?? "") : null;
  const same = op.changes.some((c) => c.same === true) ? op.changes.map((c) => c.same === true) : null;
  return { kind: op.kind, action: op.action, identifier: op.identifier, reason: op.reason, columns, after: op.changes.map((c) => c.after), before, same };
}

/**
 * `change` comes last so that the first six columns stay where scripts read
 * them: `new` for a created record's field, `same` where the service holds
 * the new value already (a full run sends it all the same), `changed`
 * otherwise, and empty on a line that names no field (a removal, a skip).
 */
export const PLAN_HEADER = "operation,action,identifier,field,before,after,change\r\n";

export function changeCell(kind: OpKind, same: boolean): "new" | "same" | "changed" {
  if (kind === "create") return "new";
  return same ? "same" : "changed";
}

/** plan.csv opened to append to (an earlier pass of the run may have written lines), its header written into a new or empty file. */
export async function openPlanFile(file: string, options: { blocking?: boolean } = {}): Promise<ByteSink> {
  const empty = await stat(file).then((s) => s.size === 0, () => true);
  const sink = await ByteSink.open(file, { append: true, ...options });
  if (empty) await sink.write(PLAN_HEADER);
  return sink;
}

/**
 * The lines of plan.csv (runs.md, "Debug mode"): one per field an operation
 * sets, or one with the reason for an operation that sets none. The secret mask
 * runs only on the values of an operation where a value holds a secret (a
 * test per value, no joined copy): a million creates are eleven million lines.
 */
export class PlanLines {
  private readonly fieldCells = new Map<string, string>();

  /**
   * `afterCells`: the new values already quoted for the bulk file.
   * `mayHoldSecret` false: the caller found no secret in any of the values.
   */
  text(op: OpRow, afterCells: readonly string[], mayHoldSecret = true): string {
    const { after, before, same } = op;
    // The identifier and a skip's reason come from the record too: a secret mapped into them is masked as well.
    const masked = mayHoldSecret && (hasSecret(op.identifier) || (op.reason !== undefined && hasSecret(op.reason)) || after.some(hasSecret) || (before !== null && before.some(hasSecret)));
    const identifier = masked ? maskSecrets(op.identifier) : op.identifier;
    const prefix = `${cell(op.kind)},${cell(op.action ?? "")},${cell(identifier)},`;
    if (op.columns.length === 0) return `${prefix},,${cell(masked ? maskSecrets(op.reason ?? "") : (op.reason ?? ""))},\r\n`;
    let text = "";
    for (let i = 0; i < op.columns.length; i++) {
      const was = before?.[i] ?? "";
      const now = masked ? cell(maskSecrets(after[i] ?? "")) : (afterCells[i] ?? "");
      text += `${prefix}${this.fieldCell(op.columns[i] ?? "")},${cell(masked ? maskSecrets(was) : was)},${now},${changeCell(op.kind, same?.[i] === true)}\r\n`;
    }
    return text;
  }

  /** A plan names the same few fields millions of times: each is quoted once. */
  private fieldCell(field: string): string {
    let quoted = this.fieldCells.get(field);
    if (quoted === undefined) {
      quoted = cell(field);
      if (this.fieldCells.size < 10_000) this.fieldCells.set(field, quoted);
    }
    return quoted;
  }
}
