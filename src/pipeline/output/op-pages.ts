/**
 * Planned operations on their way to the writer thread, a page at a time.
 * Structured cloning copies a page's strings one by one, which for a
 * million-row plan cost more than writing them out: a page is instead one
 * text, every value of every operation end to end, with the length of each
 * in `lengths` and per operation its kind, action and flags and the id of its
 * column list in `codes`, and in `marks` which of its fields the service
 * holds already. The thread cuts the text back into values, without
 * separators that a value could contain. A column list is sent once, with
 * the first page that uses it.
 *
 * @module
 */

import type { OpRow } from "./op-rows.js";
import { ownCopy } from "../../memory.js";
import { PlannedCreate, type OpKind, type PlannedOp } from "../planned-op.js";

export interface OpPage {
  columns: Array<{ id: number; names: string[] }>;
  /** Two per operation: code, column list id. */
  codes: Int32Array;
  lengths: Int32Array;
  /** Per operation with a field the service holds already: its columns' `same` as bits, 32 columns a word. */
  marks: Int32Array;
  text: string;
}

const KINDS: readonly OpKind[] = ["create", "update", "remove", "unchanged", "skipped"];
const ACTIONS: ReadonlyArray<string | null> = [null, "start", "add", "edit", "relist", "end", "delete", "create", "update", "archive"];
const KIND_CODE = new Map<OpKind, number>(KINDS.map((k, i) => [k, i]));
const CREATE_CODE = KINDS.indexOf("create");
const ACTION_CODE = new Map<string | null, number>(ACTIONS.map((a, i) => [a, i]));

// code = kind | action << 3 | flags
const ACTION_SHIFT = 3;
const HAS_BEFORE = 1 << 7;
const HAS_REASON = 1 << 8;
const HAS_SAME = 1 << 9;

/** A growing list of 32-bit integers. */
class Ints {
  values = new Int32Array(1024);
  size = 0;

  push(value: number): void {
    if (this.size === this.values.length) {
      const grown = new Int32Array(this.size * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = value;
  }

  take(): Int32Array {
    const out = this.values.slice(0, this.size);
    this.size = 0;
    return out;
  }
}

export class OpPageEncoder {
  private readonly ids = new Map<string, number>();
  private last: { names: readonly string[]; id: number } | null = null;
  private columns: OpPage["columns"] = [];
  private readonly codes = new Ints();
  private readonly lengths = new Ints();
  private readonly marks = new Ints();
  /** The page's values, joined into its text when it is taken: a string grown value by value was joined anyway when it was sent, piece by piece. */
  private readonly parts: string[] = [];
  private partCount = 0;
  private count = 0;

  /** Operations in the page being filled. */
  get size(): number {
    return this.count;
  }

  add(op: PlannedOp): void {
    if (op instanceof PlannedCreate) {
      this.addCreate(op);
      return;
    }
    const { changes } = op;
    let before = false;
    let same = false;
    for (let i = 0; i < changes.length; i++) {
      const change = changes[i];
      if (change === undefined) continue;
      if (change.before !== null) before = true;
      if (change.same === true) same = true;
    }
    const kind = KIND_CODE.get(op.kind) ?? 0;
    const action = ACTION_CODE.get(op.action) ?? 0;
    this.codes.push(kind | (action << ACTION_SHIFT) | (before ? HAS_BEFORE : 0) | (op.reason === undefined ? 0 : HAS_REASON) | (same ? HAS_SAME : 0));
    this.codes.push(this.columnsOf(changes));
    if (same) this.mark(changes);
    this.value(op.identifier);
    if (op.reason !== undefined) this.value(op.reason);
    for (let i = 0; i < changes.length; i++) this.value(changes[i]?.after ?? "");
    if (before) for (let i = 0; i < changes.length; i++) this.value(changes[i]?.before ?? "");
    this.count++;
  }

  /** A create's values straight from its record: no value before, none the service holds. */
  private addCreate(op: PlannedCreate): void {
    const { fields, values } = op;
    this.codes.push(CREATE_CODE | ((ACTION_CODE.get(op.action) ?? 0) << ACTION_SHIFT));
    this.codes.push(this.createdColumns(fields));
    this.value(op.identifier);
    for (let i = 0; i < fields.length; i++) this.value(values[fields[i] as string] ?? "");
    this.count++;
  }

  private mark(changes: PlannedOp["changes"]): void {
    for (let word = 0; word < changes.length; word += 32) {
      let bits = 0;
      for (let i = word; i < word + 32 && i < changes.length; i++) if (changes[i]?.same === true) bits |= 1 << (i - word);
      this.marks.push(bits);
    }
  }

  private value(text: string): void {
    this.parts[this.partCount++] = text;
    this.lengths.push(text.length);
  }

  /** The page so far; the next one starts empty. */
  take(): OpPage {
    const { parts } = this;
    if (parts.length !== this.partCount) parts.length = this.partCount;
    // A text of its own: values are often slices of the feed's text, each keeping its piece alive, and a join of
    // one value is that value. The list lets them go too.
    const text = parts.length === 1 ? ownCopy(parts[0] ?? "") : parts.join("");
    parts.fill("");
    this.partCount = 0;
    const page: OpPage = { columns: this.columns, codes: this.codes.take(), lengths: this.lengths.take(), marks: this.marks.take(), text };
    this.columns = [];
    this.count = 0;
    return page;
  }

  /** Most operations set the same fields as the one before: compared in place, no key built. */
  private columnsOf(changes: PlannedOp["changes"]): number {
    const last = this.last;
    if (last && last.names.length === changes.length && changes.every((c, i) => c.field === last.names[i])) return last.id;
    return this.columnsId(changes.map((c) => c.field));
  }

  /** A create's fields: the planner's shared list (CreatedFields) is the last one as a rule, known by identity. */
  private createdColumns(fields: readonly string[]): number {
    const last = this.last;
    if (last && (last.names === fields || (last.names.length === fields.length && fields.every((f, i) => f === last.names[i])))) return last.id;
    return this.columnsId(fields);
  }

  private columnsId(names: readonly string[]): number {
    const key = names.join("\u0000");
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
      this.columns.push({ id, names: [...names] });
    }
    this.last = { names, id };
    return id;
  }
}

/**
 * One operation of a page by position, reused from one operation to the
 * next: value k of the page is `text.slice(offsets[k], offsets[k + 1])`.
 */
export interface OpView {
  kind: OpKind;
  action: string | null;
  columns: readonly string[];
  offsets: Int32Array;
  identifier: number;
  /** -1: none. */
  reason: number;
  /** The first new value; the others follow, one per column. */
  after: number;
  /** The first old value, -1 when the operation has none. */
  before: number;
  /** The page's `marks`; the operation's first word in them, -1 when no field is the same (`sameAt`). */
  marks: Int32Array;
  same: number;
}

/** Whether the service holds column `i`'s new value already. */
export function sameAt(view: OpView, i: number): boolean {
  return view.same >= 0 && (((view.marks[view.same + (i >> 5)] ?? 0) >>> (i & 31)) & 1) === 1;
}

/** The receiving end: keeps the column lists it was sent, and reads pages back. */
export class OpPageDecoder {
  private readonly columns = new Map<number, readonly string[]>();

  *walk(page: OpPage): Generator<OpView> {
    for (const { id, names } of page.columns) this.columns.set(id, names);
    const { codes, lengths } = page;
    const offsets = new Int32Array(lengths.length + 1);
    for (let k = 0; k < lengths.length; k++) offsets[k + 1] = (offsets[k] ?? 0) + (lengths[k] ?? 0);
    const view: OpView = { kind: "create", action: null, columns: [], offsets, identifier: 0, reason: -1, after: 0, before: -1, marks: page.marks, same: -1 };
    let v = 0;
    let m = 0;
    for (let c = 0; c < codes.length; c += 2) {
      const code = codes[c] ?? 0;
      const columns = this.columns.get(codes[c + 1] ?? -1);
      if (!columns) throw new Error(`op page: column list ${codes[c + 1]} was never sent`);
      view.kind = KINDS[code & 7] ?? "create";
      view.action = ACTIONS[(code >> ACTION_SHIFT) & 15] ?? null;
      view.columns = columns;
      view.identifier = v++;
      view.reason = code & HAS_REASON ? v++ : -1;
      view.after = v;
      v += columns.length;
      view.before = code & HAS_BEFORE ? v : -1;
      if (code & HAS_BEFORE) v += columns.length;
      view.same = code & HAS_SAME ? m : -1;
      if (code & HAS_SAME) m += (columns.length + 31) >> 5;
      yield view;
    }
  }

  *rows(page: OpPage): Generator<OpRow> {
    for (const view of this.walk(page)) yield viewRow(view, page.text);
  }
}

/** The operation a view shows, with its values as strings. */
export function viewRow(view: OpView, text: string): OpRow {
  const value = (k: number): string => text.slice(view.offsets[k], view.offsets[k + 1]);
  const values = (first: number): string[] => view.columns.map((_, i) => value(first + i));
  const { kind, action, columns } = view;
  const same = view.same < 0 ? null : columns.map((_, i) => sameAt(view, i));
  return { kind, action, identifier: value(view.identifier), reason: view.reason < 0 ? undefined : value(view.reason), columns, after: values(view.after), before: view.before < 0 ? null : values(view.before), same };
}
