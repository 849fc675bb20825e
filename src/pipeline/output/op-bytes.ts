/**
 * plan.csv lines and bulk file rows of a page's operations, written as
 * bytes straight from the page's text: for a page whose values are all
 * ASCII and hold no secret (OpFiles tells), which is most feeds. Each line
 * is the very bytes OpRow's string writers (PlanLines, BulkBatcher.add)
 * write for the same operation.
 *
 * @module
 */

import { csvCell } from "./csv-cell.js";
import { cellBound, putBytes, putCell } from "./csv-bytes.js";
import { sameAt, type OpView } from "./op-pages.js";

const COMMA = 44;
const CR = 13;
const LF = 10;
const NONE = new Uint8Array(0);
/** plan.csv's last cell of a field's line, with its comma (op-rows.ts changeCell). */
const NEW = Buffer.from(",new");
const SAME = Buffer.from(",same");
const CHANGED = Buffer.from(",changed");
const CHANGE_BOUND = CHANGED.length;

export class OpBytes {
  /** The page's text as bytes: one byte per character, since it is ASCII. */
  private src = Buffer.allocUnsafe(1 << 20);
  private readonly heads = new Map<string, Buffer>();
  private lastHead: { kind: string; action: string | null; bytes: Buffer } | null = null;
  private readonly fieldCells = new Map<readonly string[], Buffer[]>();
  private readonly actionCells = new Map<string, Buffer>();

  /** Takes a page's text; false when it is not all ASCII, and the page goes the string way. */
  load(text: string): boolean {
    // Room for three bytes a character, so that a text that is not ASCII is never cut and mistaken for it.
    if (this.src.length < 3 * text.length) this.src = Buffer.allocUnsafe(3 * text.length);
    return this.src.write(text, 0, "utf8") === text.length;
  }

  private length(view: OpView, k: number): number {
    return (view.offsets[k + 1] ?? 0) - (view.offsets[k] ?? 0);
  }

  private cell(view: OpView, k: number, dst: Uint8Array, at: number): number {
    return putCell(this.src, view.offsets[k] ?? 0, view.offsets[k + 1] ?? 0, dst, at);
  }

  /** The most bytes `plan` writes for this operation. */
  planBound(view: OpView): number {
    const head = this.head(view).length + cellBound(this.length(view, view.identifier)) + 1;
    if (view.columns.length === 0) return head + 2 + (view.reason < 0 ? 0 : cellBound(this.length(view, view.reason))) + 3;
    let bound = 0;
    const fields = this.fields(view.columns);
    for (let i = 0; i < view.columns.length; i++) {
      const before = view.before < 0 ? 0 : cellBound(this.length(view, view.before + i));
      bound += head + (fields[i]?.length ?? 0) + before + 1 + cellBound(this.length(view, view.after + i)) + CHANGE_BOUND + 2;
    }
    return bound;
  }

  /** The lines of PlanLines.text, into `dst` at `at`; returns where they ended. */
  plan(view: OpView, dst: Uint8Array, at: number): number {
    const start = at;
    let to = putBytes(this.head(view), dst, at);
    to = this.cell(view, view.identifier, dst, to);
    dst[to++] = COMMA;
    const prefixEnd = to;
    if (view.columns.length === 0) {
      dst[to++] = COMMA;
      dst[to++] = COMMA;
      if (view.reason >= 0) to = this.cell(view, view.reason, dst, to);
      dst[to++] = COMMA;
      dst[to++] = CR;
      dst[to++] = LF;
      return to;
    }
    const fields = this.fields(view.columns);
    const created = view.kind === "create";
    for (let i = 0; i < view.columns.length; i++) {
      if (i > 0) {
        dst.copyWithin(to, start, prefixEnd);
        to += prefixEnd - start;
      }
      to = putBytes(fields[i] ?? NONE, dst, to);
      if (view.before >= 0) to = this.cell(view, view.before + i, dst, to);
      dst[to++] = COMMA;
      to = this.cell(view, view.after + i, dst, to);
      to = putBytes(created ? NEW : sameAt(view, i) ? SAME : CHANGED, dst, to);
      dst[to++] = CR;
      dst[to++] = LF;
    }
    return to;
  }

  /** The most bytes `bulkRow` writes for this operation. */
  bulkBound(action: string, view: OpView): number {
    let bound = this.action(action).length + cellBound(this.length(view, view.identifier)) + 2;
    for (let i = 0; i < view.columns.length; i++) bound += 1 + cellBound(this.length(view, view.after + i));
    return bound;
  }

  /** The data row of BulkBatcher.add, into `dst` at `at`; returns where it ended. */
  bulkRow(action: string, view: OpView, dst: Uint8Array, at: number): number {
    let to = putBytes(this.action(action), dst, at);
    to = this.cell(view, view.identifier, dst, to);
    for (let i = 0; i < view.columns.length; i++) {
      dst[to++] = COMMA;
      to = this.cell(view, view.after + i, dst, to);
    }
    dst[to++] = CR;
    dst[to++] = LF;
    return to;
  }

  /** `kind,action,`, as PlanLines begins a line. */
  private head(view: OpView): Buffer {
    const last = this.lastHead;
    // Operations come in runs of the same kind and action: no key is built for those.
    if (last && last.kind === view.kind && last.action === view.action) return last.bytes;
    const key = `${view.kind},${view.action ?? ""}`;
    let bytes = this.heads.get(key);
    if (!bytes) this.heads.set(key, (bytes = Buffer.from(`${csvCell(view.kind)},${csvCell(view.action ?? "")},`)));
    this.lastHead = { kind: view.kind, action: view.action, bytes };
    return bytes;
  }

  /** Per column, `field,` quoted: a column list is the same array for every operation that sets those fields. */
  private fields(columns: readonly string[]): Buffer[] {
    let cells = this.fieldCells.get(columns);
    if (!cells) this.fieldCells.set(columns, (cells = columns.map((c) => Buffer.from(`${csvCell(c)},`))));
    return cells;
  }

  private action(action: string): Buffer {
    let cell = this.actionCells.get(action);
    if (!cell) this.actionCells.set(action, (cell = Buffer.from(`${csvCell(action)},`)));
    return cell;
  }
}
