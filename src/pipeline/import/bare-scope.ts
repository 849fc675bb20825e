/**
 * A scope of identifiers alone, kept partly out of the work database. A
 * diff run without removals asks its scope only whether a record is in it,
 * and when a record's values are the identifier alone, those values tell
 * nothing more. The run's source index already marks every scope
 * identifier it holds an entry for (ScopeMarks), so such a record need not
 * be inserted as well: the work database keeps the rest (identifiers the
 * index cannot tell apart, records read before the index came), and its
 * lookups ask the marks for what the table lacks.
 *
 * Removals list the scope's identifiers, which the marks cannot give back,
 * so a run that may remove never holds records out.
 *
 * @module
 */

import { ConveyorError } from "../../errors.js";
import type { ScopeEntry } from "./scope-rows.js";

/**
 * Scope membership kept outside the work database for identifiers it can
 * tell apart (a diff run's SourceIndex): told every scope identifier, asked
 * whether one is in scope, and whether the feed mentioned one that the
 * work database did not mark.
 */
export interface ScopeMarks {
  /** Notes a scope identifier; true when the marks alone can tell it is in scope (`inScope`). */
  markScope(identifier: string): boolean;
  /** Whether `markScope` noted the identifier, and could tell it from every other. */
  inScope(identifier: string): boolean;
  mentioned(identifier: string): boolean;
}

export class BareScope {
  /** The one column of a scope that may be held out; null until a run allows it. */
  private field: string | null = null;
  /** Whether the scope's records have that column alone: decided on the first one, as all share the export's columns. */
  private bare: boolean | null = null;
  /** The marks that answer for the records held out, until `release`. */
  private holder: ScopeMarks | null = null;
  private released = false;
  /** Records held out. */
  count = 0;

  allow(field: string): void {
    this.field = field;
  }

  /**
   * The entries to insert: all but those the marks now answer for. Holding
   * marks every entry in `marks`; `entries` itself comes back unmarked when
   * nothing may be held, and the caller marks them.
   */
  keep(entries: readonly ScopeEntry[], marks: ScopeMarks): readonly ScopeEntry[] {
    const field = this.field;
    const first = entries[0];
    if (field === null || first === undefined) return entries;
    this.bare ??= isBare(first.values, field);
    if (!this.bare || this.released || (this.holder !== null && this.holder !== marks)) return entries;
    this.holder = marks;
    const kept: ScopeEntry[] = [];
    for (const e of entries) {
      // A record whose identifier is not its value (an identifier trimmed, say) would not come back the same.
      if (!marks.markScope(e.identifier) || e.values[field] !== e.identifier) kept.push(e);
      else this.count++;
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
  }

  /** Adds to `found` the held-out records among `identifiers`. */
  lookup(identifiers: readonly string[], found: Map<string, Record<string, string>>): void {
    const holder = this.answering("a lookup of the scope's records");
    const field = this.field;
    if (holder === null || field === null) return;
    for (const id of identifiers) if (!found.has(id) && holder.inScope(id)) found.set(id, { [field]: id });
  }

  /** Sets to 1 the positions of `list` (a JSON list of identifiers) that are held-out records. */
  has(list: string, found: Uint8Array): void {
    const holder = this.answering("a lookup of the scope's records");
    if (holder === null) return;
    const ids = JSON.parse(list) as string[];
    for (let k = 0; k < ids.length; k++) if (found[k] !== 1 && holder.inScope(ids[k] ?? "")) found[k] = 1;
  }

  refuseRemovals(): void {
    if (this.count > 0) throw misuse("the scope's removal candidates");
  }

  /** The marks, when records are held out; null when none are. */
  private answering(what: string): ScopeMarks | null {
    if (this.count === 0) return null;
    if (this.holder === null) throw misuse(`${what} past the plan`);
    return this.holder;
  }
}

function misuse(what: string): ConveyorError {
  return new ConveyorError("internal", `${what} were asked for after records of the scope were held out of the work database`, {
    hint: "This is a bug in Conveyor, not in the definition: report it with the run's definition. Running it as a full run (not a diff run) avoids it meanwhile.",
  });
}

function isBare(values: Record<string, string>, field: string): boolean {
  const keys = Object.keys(values);
  return keys.length === 1 && keys[0] === field;
}
