/**
 * What the mapping stage consumes and produces. The consumed shapes are kept
 * minimal and structural on purpose: the normalized `FileConfig` of
 * `src/definition/` and the `RecordReader` of `src/formats/` satisfy them
 * without mapping having to import those modules (and without a cycle).
 */

/** A `field_map` value: a column name (or JSONPath/XPath) or `[start, end]` offsets of a fixed-width line. */
export type FieldRef = string | readonly number[];

/** One action rule as the definition layer normalizes it: functions in written order. */
export interface ActionRuleConfig {
  readonly search?: string | null | undefined;
  readonly functions: ReadonlyArray<{ readonly name: string; readonly arg: unknown }>;
}

/**
 * The mapping keys of one `file_configs[]` entry. Values are typed `unknown`
 * where JSON allows several spellings (`"stock": 0` or `"0"`), and checked when
 * they are bound, with errors that name the key.
 */
export interface MappingConfig {
  readonly field_map: Readonly<Record<string, FieldRef>>;
  readonly field_run?: Readonly<Record<string, unknown>> | null | undefined;
  readonly value_map?: Readonly<Record<string, unknown>> | null | undefined;
  readonly value_map_default?: Readonly<Record<string, unknown>> | null | undefined;
  readonly vendor_actions?: readonly ActionRuleConfig[] | null | undefined;
  readonly service_actions?: readonly ActionRuleConfig[] | null | undefined;
  readonly identifier?: string | null | undefined;
}

/** A reader of source rows, seen from mapping: which columns exist and how to read one. */
export interface FieldSource<Row> {
  /** The header, or null when the format has no fixed columns (JSON, XML, JSONPath, fixed width). */
  columns(): Promise<string[] | null>;
  /** A getter for one column or expression; null when the source does not have it. */
  accessor(ref: string | [number, number]): ((row: Row) => string | undefined) | null;
}

/** What mapping reads of a row itself: a parse problem the reader found (an unterminated quote). */
export interface RowLike {
  readonly error?: string | undefined;
}

/** Reads one value of the current source row. */
export type RowGetter<Row> = (row: Row) => string | undefined;

/** A mapped record: service field → text. Prototype-less, so field names never hit `Object.prototype`. */
export type MappedRecord = Record<string, string>;

/** A row that could not be mapped; the run records it and goes on. */
export interface RowErrorInfo {
  line: number;
  message: string;
  field?: string;
  /** The record's identifier, when it was mapped before the row failed: the record is still in the feed. */
  identifier?: string;
}

export type MapResult =
  | { ok: true; line: number; identifier: string; record: MappedRecord; ignored: ReadonlySet<string> }
  | { ok: false; skipped: SkipInfo }
  | { ok: false; error: RowErrorInfo };

/** A record dropped by a `skip` function: which rule list, the rule's 0-based index, where. */
export interface SkipInfo {
  actions: "vendor_actions" | "service_actions";
  rule: number;
  line: number;
  identifier?: string;
}

/**
 * Thrown inside the per-record stages (calculate, actions) and turned into a
 * `RowErrorInfo` by the mapper: it never escapes to stop a run.
 */
export class RowFailure extends Error {
  readonly field: string | undefined;

  constructor(message: string, field?: string) {
    super(message);
    this.name = "RowFailure";
    this.field = field;
  }
}

/** The ignored set of a record when nothing was ignored: shared, so most records allocate none. */
export const NONE_IGNORED: ReadonlySet<string> = new Set<string>();

/**
 * A fresh record with no prototype (a field may be called `constructor` or
 * `__proto__`). Not `Object.create(null)`: V8 makes that a dictionary-mode
 * object, whose every write is a hash insert and which JSON.stringify takes
 * off its fast path; a million-row run paid seconds for it.
 */
export function newRecord(): MappedRecord {
  return Object.setPrototypeOf({}, null) as MappedRecord;
}

/** Empty for the purposes of defaults and identifiers: missing, or only spaces. */
export function isBlank(value: string | undefined): boolean {
  return value === undefined || value.trim() === "";
}

/** JSON scalars as they appear in definitions (`"stock": 0`) become text; objects are refused by the caller. */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value === null) return "";
  return undefined;
}
