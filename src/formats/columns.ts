import { ConveyorError } from "../errors.js";
import type { FieldRef } from "./types.js";

/** The key used for the second, forgiving pass: suppliers pad and re-case their headers. */
export function looseKey(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * Finds the positions of `name` among `columns`: exact match first, then ignoring case and
 * surrounding spaces. Returns the one index, null when missing, and throws when two columns
 * answer (a duplicated header would silently pick one of them otherwise).
 */
export function resolveColumn(columns: readonly string[], name: string): number | null {
  const exact = indexesOf(columns, (c) => c === name);
  if (exact.length === 1) return exact[0] ?? null;
  if (exact.length > 1) throw ambiguous(name, exact.map((i) => columns[i] ?? ""));
  const key = looseKey(name);
  const loose = indexesOf(columns, (c) => looseKey(c) === key);
  if (loose.length === 1) return loose[0] ?? null;
  if (loose.length > 1) throw ambiguous(name, loose.map((i) => columns[i] ?? ""));
  return null;
}

export function offsetsNotFixed(ref: [number, number]): ConveyorError {
  return new ConveyorError(
    "definition_invalid",
    `field_map value [${ref.join(", ")}] is a pair of character offsets, which only fixed-width files use`,
    { hint: "Set format to fixed, or map a column name." },
  );
}

/** The column a field_map value names in a file of named columns: character offsets are refused, a missing name is null. */
export function namedColumn(columns: readonly string[], ref: FieldRef): number | null {
  if (Array.isArray(ref)) throw offsetsNotFixed(ref);
  return resolveColumn(columns, ref);
}

function indexesOf(columns: readonly string[], test: (c: string) => boolean): number[] {
  const found: number[] = [];
  columns.forEach((c, i) => {
    if (test(c)) found.push(i);
  });
  return found;
}

function ambiguous(name: string, matches: string[]): ConveyorError {
  return new ConveyorError(
    "header_mismatch",
    `field_map names column "${name}", but the file has ${matches.length} columns that match it: ${matches
      .map((m) => JSON.stringify(m))
      .join(", ")}`,
    {
      details: { column: name, matches },
      hint: "Rename the duplicated columns in the file, or use `headers` to name the columns yourself.",
    },
  );
}

/** Adds names to an ordered set of column names, keeping first-seen order. */
export function addColumns(target: string[], seen: Set<string>, names: Iterable<string>): void {
  for (const n of names) {
    if (!seen.has(n)) {
      seen.add(n);
      target.push(n);
    }
  }
}
