import type { Scalar, SearchRecord } from "./types.js";

/*
 * Reading a field of a record. A dotted name (`billing.city`, `items.sku`) walks
 * nested objects; where the walk crosses an array, every element is walked, so a
 * field can read several values and a term holds when it holds for any of them.
 * A path that ends on an object or an array reads every scalar inside it.
 * A field with no value at all (missing, or an empty array) reads as one empty
 * value, so "missing = empty" holds for nested fields too.
 */

/** The test is asked about one value; returning true stops the walk. */
export type LeafTest = (value: Scalar) => boolean;

/** Walk results: no value met, values met but none passed, one passed. */
const NONE = 0;
const SEEN = 1;
const FOUND = 2;
type WalkState = 0 | 1 | 2;

function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null && !(value instanceof Date);
}

/** Every scalar inside `value` (itself, when it is one). */
function leaves(value: unknown, test: LeafTest): WalkState {
  if (!isContainer(value)) return test(value as Scalar) ? FOUND : SEEN;
  let state: WalkState = NONE;
  if (Array.isArray(value)) {
    for (const item of value) {
      const s = leaves(item, test);
      if (s === FOUND) return FOUND;
      if (s === SEEN) state = SEEN;
    }
    return state;
  }
  // for…in instead of Object.values: no array per record on keyword searches.
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (!Object.prototype.hasOwnProperty.call(object, key)) continue;
    const s = leaves(object[key], test);
    if (s === FOUND) return FOUND;
    if (s === SEEN) state = SEEN;
  }
  return state;
}

function settle(state: WalkState, test: LeafTest): boolean {
  if (state === FOUND) return true;
  return state === NONE ? test(undefined) : false;
}

/** Keyword search: does the test hold for some scalar anywhere in the record? */
export function anyValue(record: SearchRecord, test: LeafTest): boolean {
  return settle(leaves(record, test), test);
}

export type FieldReader = (record: SearchRecord, test: LeafTest) => boolean;

/**
 * A reader for one field name, prepared once per term. A key that holds the
 * whole name (a flat record with a `billing.city` column) wins over the walk.
 * A name that is not found as written is also tried in lowercase, the way the
 * service names its fields, so `Brand:=Nike` reads `brand`.
 */
export function fieldReader(field: string): FieldReader {
  const lower = field.toLowerCase();
  const path = field.split(".");
  if (path.length === 1 || path.some((segment) => segment === "")) {
    return (record, test) => {
      let value = record[field];
      if (value === undefined && lower !== field) value = record[lower];
      if (!isContainer(value)) return test(value as Scalar);
      return settle(leaves(value, test), test);
    };
  }
  const lowerPath = lower.split(".");
  // Remaining dotted names from each step, for nested keys that contain dots themselves.
  const rests = path.map((_, i) => path.slice(i).join("."));
  const indexes = path.map((segment) => (/^\d+$/.test(segment) ? Number(segment) : -1));
  const last = path.length - 1;

  const walk = (current: unknown, i: number, test: LeafTest): WalkState => {
    if (Array.isArray(current)) {
      const index = indexes[i] ?? -1;
      if (index >= 0) return walk(current[index], i + 1, test);
      let state: WalkState = NONE;
      for (const item of current) {
        const s = walk(item, i, test);
        if (s === FOUND) return FOUND;
        if (s === SEEN) state = SEEN;
      }
      return state;
    }
    if (i > last) return leaves(current, test);
    if (!isContainer(current)) return test(undefined) ? FOUND : SEEN;
    const object = current as Record<string, unknown>;
    if (i > 0 && i < last) {
      const whole = object[rests[i] ?? ""];
      if (whole !== undefined) return leaves(whole, test);
    }
    let next = object[path[i] ?? ""];
    if (next === undefined) next = object[lowerPath[i] ?? ""];
    return walk(next, i + 1, test);
  };

  return (record, test) => {
    let whole = record[field];
    if (whole === undefined && lower !== field) whole = record[lower];
    if (whole !== undefined) return settle(leaves(whole, test), test);
    return settle(walk(record, 0, test), test);
  };
}
