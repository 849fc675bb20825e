import { ConveyorError, isConveyorError } from "../errors.js";
import type { FieldRef, FieldSource, RowGetter } from "./types.js";

/** `field_map` bound to one source: a getter per service field, in key order. */
export interface BoundFieldMap<Row> {
  readonly fields: readonly string[];
  readonly getters: ReadonlyArray<RowGetter<Row>>;
  /** The header as the reader reported it, or null when the format has none. */
  readonly columns: readonly string[] | null;
  /**
   * A getter for a source column that `field_map` does not name (templates use
   * it): exact name, then ignoring case and spaces. Null when there is no such
   * column or the match is ambiguous.
   */
  column(name: string): RowGetter<Row> | null;
  /**
   * A getter for a value named the way a `field_map` value names one (pointers
   * use it): a column as `column` finds it, else an expression the reader
   * evaluates (JSONPath, XPath). Null when neither reads anything.
   */
  value(ref: string): RowGetter<Row> | null;
}

/** At most this many column names are listed in an error; a 400-column feed would bury the message. */
const LIST_LIMIT = 60;

type Resolution = { column: string } | { missing: true } | { ambiguous: string[] };

function normalize(name: string): string {
  return name.trim().toLowerCase();
}

/** Exact match first, then ignoring case and surrounding spaces; two candidates are ambiguous. */
function resolveColumn(name: string, columns: readonly string[]): Resolution {
  const exact = columns.filter((c) => c === name);
  if (exact.length === 1) return { column: name };
  if (exact.length > 1) return { ambiguous: exact };
  const wanted = normalize(name);
  const loose = columns.filter((c) => normalize(c) === wanted);
  if (loose.length === 1 && loose[0] !== undefined) return { column: loose[0] };
  if (loose.length > 1) return { ambiguous: loose };
  return { missing: true };
}

function describeRef(ref: FieldRef): string {
  return typeof ref === "string" ? JSON.stringify(ref) : `[${ref.join(", ")}]`;
}

function listColumns(columns: readonly string[] | null): string {
  if (columns === null) return "the format does not list its columns";
  if (columns.length === 0) return "the file has no columns";
  const shown = columns.slice(0, LIST_LIMIT).map((c) => JSON.stringify(c));
  const more = columns.length > LIST_LIMIT ? `, … and ${columns.length - LIST_LIMIT} more` : "";
  return `columns in the file: ${shown.join(", ")}${more}`;
}

function asOffsets(ref: readonly number[], field: string): [number, number] {
  const [start, end] = ref;
  if (ref.length !== 2 || start === undefined || end === undefined || !Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start) {
    throw new ConveyorError("definition_invalid", `field_map.${field}: ${describeRef(ref)} is not a pair of character offsets`, {
      details: { field: `field_map.${field}` },
      hint: "Write fixed-width columns as [start, end]: start counted from 0 and included, end excluded, end > start.",
    });
  }
  return [start, end];
}

const SEPARATORS = [";", "\t", "|", ","];

/** A header read as one column that holds a separator: the file's delimiter is another (a `;` file read with `,`). */
function delimiterHint(columns: readonly string[] | null): string | null {
  if (columns?.length !== 1) return null;
  const only = columns[0] ?? "";
  const separator = SEPARATORS.find((c) => only.includes(c));
  if (separator === undefined) return null;
  const shown = separator === "\t" ? "\\t (tab)" : separator;
  return `The first line reads as one column that holds "${shown}": the file is most likely delimited by ${shown}. Set delimiter to ${JSON.stringify(separator)} in the file config.`;
}

/**
 * Binds `field_map` to a source before the first record is used. Every missing
 * and every ambiguous column is collected and reported in one
 * `header_mismatch`, so a supplier's renamed column fails the run instead of
 * writing blanks.
 */
export async function bindFieldMap<Row>(fieldMap: Readonly<Record<string, FieldRef>>, source: FieldSource<Row>): Promise<BoundFieldMap<Row>> {
  const columns = await source.columns();
  const fields: string[] = [];
  const getters: RowGetter<Row>[] = [];
  const missing: string[] = [];
  const ambiguous: string[] = [];

  for (const [field, ref] of Object.entries(fieldMap)) {
    let getter: RowGetter<Row> | null;
    if (typeof ref === "string") {
      const found = columns === null ? { column: ref } : resolveColumn(ref, columns);
      if ("ambiguous" in found) {
        ambiguous.push(`${field} → ${describeRef(ref)} matches ${found.ambiguous.map((c) => JSON.stringify(c)).join(" and ")}`);
        continue;
      }
      try {
        // Not a column name: with jsonpath or xpath it is an expression only the reader can evaluate.
        getter = source.accessor("column" in found ? found.column : ref);
      } catch (err) {
        // A reader that matches names itself reports ambiguity by throwing; collect it with the rest.
        if (!isConveyorError(err) || err.code !== "header_mismatch") throw err;
        ambiguous.push(`${field} → ${describeRef(ref)}: ${err.message}`);
        continue;
      }
    } else {
      getter = source.accessor(asOffsets(ref, field));
    }
    if (getter === null) {
      missing.push(`${field} → ${describeRef(ref)}`);
      continue;
    }
    fields.push(field);
    getters.push(getter);
  }

  if (missing.length > 0 || ambiguous.length > 0) {
    const parts: string[] = [];
    if (missing.length > 0) parts.push(`field_map names ${missing.length === 1 ? "a column" : "columns"} the file does not have: ${missing.join("; ")}`);
    if (ambiguous.length > 0) parts.push(`field_map names ${ambiguous.length === 1 ? "a column that matches" : "columns that match"} more than one column: ${ambiguous.join("; ")}`);
    throw new ConveyorError("header_mismatch", `${parts.join(". ")}. ${capitalize(listColumns(columns))}.`, {
      details: { missing, ambiguous, available: columns ?? null },
      hint:
        missing.length > 0
          ? (delimiterHint(columns) ?? "The supplier may have renamed a column: update field_map so each value names one of the columns listed (matching is exact, then ignoring case and surrounding spaces).")
          : "Two columns differ only in case or spaces: write the column name in field_map exactly as the file spells it.",
    });
  }

  return {
    fields,
    getters,
    columns,
    column(name: string): RowGetter<Row> | null {
      if (columns === null) return source.accessor(name);
      const found = resolveColumn(name, columns);
      return "column" in found ? source.accessor(found.column) : null;
    },
    value(ref: string): RowGetter<Row> | null {
      const found = columns === null ? { column: ref } : resolveColumn(ref, columns);
      if ("ambiguous" in found) return null;
      return source.accessor("column" in found ? found.column : ref);
    },
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
