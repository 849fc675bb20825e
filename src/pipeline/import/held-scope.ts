/**
 * Scope records kept partly out of the work database. A diff run without
 * removals asks its scope whether a record is in it and, for the rows it
 * plans, what the record's values are: its identifier, and the stock and
 * price that change limits weigh. The run's source index already marks
 * every scope identifier it holds an entry for (ScopeMarks). So a record
 * the index can tell apart, whose values come back exactly from a few
 * bytes (the identifier, decimals: decimal-codes.ts), is held beside the
 * index's entry instead of inserted; the work database keeps the rest
 * (identifiers the index cannot tell apart, records read before the index
 * came, values of any other shape), and its lookups ask here for what the
 * table lacks.
 *
 * Removals list the scope's identifiers, which the marks cannot give back,
 * so a run that may remove never holds records out.
 *
 * @module
 */

import { ConveyorError } from "../../errors.js";
import { NO_CODE, decimalCode, decimalText } from "./decimal-codes.js";
import type { ScopeEntry } from "./scope-rows.js";

/**
 * Scope membership kept outside the work database for identifiers it can
 * tell apart (a diff run's SourceIndex), by entry numbers below `entries`:
 * told every scope identifier, asked whether one is in scope, and whether
 * the feed mentioned one that the work database did not mark.
 */
export interface ScopeMarks {
  readonly entries: number;
  /**
   * Whether the marks hold every identifier of the snapshot. Records are
   * held only then: the memory of their codes is taken back from the repeat
   * finder, which a cut index leaves to fill (repeats.ts).
   */
  readonly whole: boolean;
  /** Notes a scope identifier; true when the marks alone can tell it is in scope (`scopeEntry`). */
  markScope(identifier: string): boolean;
  /** `markScope`, giving the identifier's entry when it is the first scope record of that entry, and -1 otherwise. */
  claimScope(identifier: string): number;
  /** The entry of an identifier `markScope` noted and can tell from every other; -1 for any other. */
  scopeEntry(identifier: string): number;
  mentioned(identifier: string): boolean;
}

/** The shape of the records held: their fields in the export's order, and which one is the identifier. */
interface Shape {
  fields: string[];
  identifierAt: number;
}

export class HeldScope {
  /** The scope's identifier field; null until a run allows holding. */
  private identifier: string | null = null;
  /** Decided on the first record, as all share the export's columns; null when its records cannot be held. */
  private shape: Shape | null | undefined = undefined;
  /** The marks that answer for the records held out, until `release`. */
  private holder: ScopeMarks | null = null;
  private released = false;
  /** Per field of the shape, the code of each held record's value (empty for the identifier). */
  private codes: Int32Array[] = [];
  /** 1 for each entry whose record is held. */
  private held: Uint8Array = new Uint8Array(0);
  private readonly scratch: number[] = [];
  /** Records held out. */
  count = 0;

  allow(identifier: string): void {
    this.identifier = identifier;
  }

  /**
   * The entries to insert: all but those held. Holding marks every entry in
   * `marks`; `entries` itself comes back unmarked when nothing may be held,
   * and the caller marks them.
   */
  keep(entries: readonly ScopeEntry[], marks: ScopeMarks): readonly ScopeEntry[] {
    const first = entries[0];
    if (this.identifier === null || first === undefined || this.released || !marks.whole || (this.holder !== null && this.holder !== marks)) return entries;
    if (this.shape === undefined) this.shape = shapeOf(first.values, this.identifier);
    const shape = this.shape;
    if (shape === null) return entries;
    if (this.holder === null) this.open(marks, shape);
    const kept: ScopeEntry[] = [];
    for (const e of entries) {
      const entry = marks.claimScope(e.identifier);
      if (entry < 0 || !this.hold(entry, e, shape)) {
        if (entry < 0) this.drop(marks.scopeEntry(e.identifier));
        kept.push(e);
      }
    }
    return kept;
  }

  /**
   * The marks are let go with the plan (the source index's table is not
   * kept through apply and commit): from then on nothing can answer for
   * the records held out, and a lookup that would need them is refused.
   */
  release(): void {
    this.holder = null;
    this.released = true;
    this.held = new Uint8Array(0);
    this.codes = [];
  }

  /** Adds to `found` the held-out records among `identifiers`. */
  lookup(identifiers: readonly string[], found: Map<string, Record<string, string>>): void {
    const holder = this.answering("a lookup of the scope's records");
    const shape = this.shape;
    if (holder === null || !shape) return;
    for (const id of identifiers) {
      if (found.has(id)) continue;
      const entry = holder.scopeEntry(id);
      if (entry >= 0 && this.isHeld(entry)) found.set(id, this.values(id, entry, shape));
    }
  }

  /** Sets to 1 the positions of `list` (a JSON list of identifiers) that are held-out records. */
  has(list: string, found: Uint8Array): void {
    const holder = this.answering("a lookup of the scope's records");
    if (holder === null) return;
    const ids = JSON.parse(list) as string[];
    for (let k = 0; k < ids.length; k++) {
      if (found[k] === 1) continue;
      const entry = holder.scopeEntry(ids[k] ?? "");
      if (entry >= 0 && this.isHeld(entry)) found[k] = 1;
    }
  }

  refuseRemovals(): void {
    if (this.count > 0) throw misuse("the scope's removal candidates");
  }

  private open(marks: ScopeMarks, shape: Shape): void {
    this.holder = marks;
    this.codes = shape.fields.map((_, i) => new Int32Array(i === shape.identifierAt ? 0 : marks.entries));
    this.held = new Uint8Array(marks.entries);
  }

  private isHeld(entry: number): boolean {
    return this.held[entry] === 1;
  }

  /** Holds `e` at `entry` when its values come back exactly from what is kept. */
  private hold(entry: number, e: ScopeEntry, { fields, identifierAt }: Shape): boolean {
    const { scratch } = this;
    let i = 0;
    for (const field in e.values) {
      const value = e.values[field] ?? "";
      if (field !== fields[i]) return false;
      if (i === identifierAt) {
        // A record whose identifier is not its value (an identifier trimmed, say) would not come back the same.
        if (value !== e.identifier) return false;
      } else {
        const code = decimalCode(value);
        if (code === NO_CODE) return false;
        scratch[i] = code;
      }
      i++;
    }
    if (i !== fields.length) return false;
    for (let k = 0; k < i; k++) {
      const column = this.codes[k];
      if (k !== identifierAt && column) column[entry] = scratch[k] ?? NO_CODE;
    }
    this.held[entry] = 1;
    this.count++;
    return true;
  }

  /** A later record of an identifier already held replaces it in the work database: the held one is forgotten. */
  private drop(entry: number): void {
    if (entry < 0 || !this.isHeld(entry)) return;
    this.held[entry] = 0;
    this.count--;
  }

  private values(id: string, entry: number, { fields, identifierAt }: Shape): Record<string, string> {
    const values: Record<string, string> = {};
    for (let i = 0; i < fields.length; i++) values[fields[i] ?? ""] = i === identifierAt ? id : decimalText(this.codes[i]?.[entry] ?? NO_CODE);
    return values;
  }

  /** The marks, when records are held out; null when none are. */
  private answering(what: string): ScopeMarks | null {
    if (this.count === 0) return null;
    if (this.holder === null) throw misuse(`${what} past the plan`);
    return this.holder;
  }
}

/** The shape of records like `values`, or null when they cannot be held: no identifier field, or a field named __proto__. */
function shapeOf(values: Record<string, string>, identifier: string): Shape | null {
  const fields = Object.keys(values);
  const identifierAt = fields.indexOf(identifier);
  return identifierAt < 0 || fields.includes("__proto__") ? null : { fields, identifierAt };
}

function misuse(what: string): ConveyorError {
  return new ConveyorError("internal", `${what} were asked for after records of the scope were held out of the work database`, {
    hint: "This is a bug in Conveyor, not in the definition: report it with the run's definition. Running it as a full run (not a diff run) avoids it meanwhile.",
  });
}
