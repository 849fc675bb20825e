/**
 * The parsed form of a search expression (search.md). Plain data only, so a node
 * can be logged, stored, sent to another process or translated to a query of
 * another store; everything a record comparison needs is read once at parse time.
 */

/** `=`, `-=`/`!=`, `>`, `>=`, `<`, `<=`, contains (no operator), `-` (not contains). */
export type SearchOperator = "eq" | "ne" | "gt" | "ge" | "lt" | "le" | "contains" | "not_contains";

export type TimeUnit = "second" | "minute" | "hour" | "day" | "week" | "month" | "year";

/**
 * A date relative to the moment of evaluation: `"now"`, `"-2 hours"` (base now) or
 * `"today"`, `"yesterday"` (base today: the whole UTC day, shifted by `amount` days).
 */
export interface RelativeDate {
  base: "now" | "today";
  amount: number;
  unit: TimeUnit;
}

/** An inclusive span of UTC milliseconds; an instant has first === last. */
export interface TimeSpan {
  first: number;
  last: number;
}

export interface SearchValue {
  /** The value as written, quotes removed and escapes resolved. */
  raw: string;
  quoted: boolean;
  /** Trimmed and lowercased: the form text comparisons use. */
  text: string;
  /** Set when the value is a plain decimal number (`12`, `-3.5`; not `1e3`, `0700`). */
  number: number | null;
  /** `0`/`false` → false, `1`/`true` → true: the boolean reading of `=` and `!=`. */
  bool: boolean | null;
  /** An absolute date; a date without a time spans its whole UTC day. */
  date: TimeSpan | null;
  relative: RelativeDate | null;
  /** Lowercased pieces between unescaped `%`; null when the value is not a pattern. */
  pattern: string[] | null;
}

export type SearchNode =
  | { type: "and"; nodes: SearchNode[] }
  | { type: "or"; nodes: SearchNode[] }
  | { type: "term"; field: string; op: SearchOperator; value: SearchValue }
  | { type: "keyword"; value: SearchValue };

/** One record as the evaluator sees it: JSON-like values, nested objects and arrays. */
export type SearchRecord = Record<string, unknown>;

/** A value a field path ends on; `undefined` is a missing field and reads as empty. */
export type Scalar = string | number | boolean | bigint | Date | null | undefined;

export interface MatchOptions {
  /** The moment relative dates (`"-1 day"`, `"today"`) count from; default: the current time. */
  now?: Date;
}

export interface CompileOptions {
  /** Asked once per evaluated record, only when the expression holds a relative date. */
  now?: () => Date;
}
