/**
 * The candidates of an import's pointers, collected while its records are
 * read and written only when the run commits (run.ts): a run that fails, is
 * canceled or killed leaves the stored values alone, so the next run reads
 * the same range again.
 *
 * @module
 */

import { ConveyorError } from "../../errors.js";
import type { SourceRow } from "../../formats/index.js";
import type { BoundFieldMap } from "../../mapping/index.js";
import { readPointers, writePointers, type PointerRules } from "../../pointers/index.js";
import type { StateStore } from "../../state/index.js";
import { faultPoint } from "../faults.js";

type Getter = (row: SourceRow) => string | undefined;

/** Numbers compare as numbers (an id 9 before 10); anything else, ISO times among them, as text. */
const NUMBER = /^-?\d+(\.\d+)?$/;

export function pointerGreater(a: string, b: string): boolean {
  if (NUMBER.test(a) && NUMBER.test(b)) return Number(a) > Number(b);
  return a > b;
}

export class PointerTally {
  private readonly seen = new Map<string, string>();

  constructor(private readonly rules: PointerRules) {}

  get empty(): boolean {
    return Object.keys(this.rules).length === 0;
  }

  /**
   * The pointers' getters for one file, bound like field_map's values; a
   * column the file lacks fails the run, as a renamed field_map column does,
   * rather than leave the pointer where it is unnoticed.
   */
  bind(header: BoundFieldMap<SourceRow>, file: string): ((row: SourceRow) => void) | null {
    if (this.empty) return null;
    const getters: Array<[string, Getter]> = [];
    for (const [name, rule] of Object.entries(this.rules)) {
      const getter = header.value(rule.from);
      if (getter === null) {
        throw new ConveyorError("header_mismatch", `connection.pointers.${name}.from: ${file} has no column ${JSON.stringify(rule.from)}`, {
          details: { field: `connection.pointers.${name}.from`, available: header.columns ?? null },
          hint: "Name a column of the file (matching is exact, then ignoring case and surrounding spaces), or a JSONPath/XPath with jsonpath: 1 / xpath: 1.",
        });
      }
      getters.push([name, getter]);
    }
    return (row) => {
      for (const [name, get] of getters) this.offer(name, get(row));
    };
  }

  private offer(name: string, raw: string | undefined): void {
    const value = raw?.trim();
    // A record without the value says nothing about where the feed stands.
    if (value === undefined || value === "") return;
    const current = this.seen.get(name);
    const keep = this.rules[name]?.keep ?? "max";
    if (current === undefined || keep === "last" || pointerGreater(value, current)) this.seen.set(name, value);
  }

  /** The values the run would store: only the pointers some record gave a value. */
  values(): Record<string, string> {
    return Object.fromEntries(this.seen);
  }
}

/**
 * Stores what a committing run read. `max` never moves a pointer back: a feed
 * that answers with older records than the stored value leaves it (only an
 * API reset lowers it).
 */
export async function commitPointers(store: StateStore, automation: string, rules: PointerRules, seen: Record<string, string>): Promise<void> {
  if (Object.keys(seen).length === 0) return;
  const stored = await readPointers(store, automation);
  const changes: Record<string, string> = {};
  for (const [name, value] of Object.entries(seen)) {
    const before = stored[name];
    if (rules[name]?.keep === "max" && before !== undefined && !pointerGreater(value, before)) continue;
    changes[name] = value;
  }
  faultPoint("before-pointers");
  if (Object.keys(changes).length > 0) await writePointers(store, automation, changes);
}
