import { ConveyorError } from "../errors.js";
import { isBlank, scalarText, type MappedRecord } from "./types.js";

/**
 * `value_map` and `value_map_default`, compiled once into Maps.
 *
 * Semantics where the spec is terse:
 * - keys and incoming values are compared after trimming; the replacement is
 *   written as given;
 * - a per-field entry for the value wins over a global entry for the same
 *   value; a field whose per-field map lacks the value still gets the global
 *   translation (a per-field map refines the global one, it does not switch it off);
 * - a value without a match passes through untouched (not even trimmed);
 * - `null` as a replacement means empty text.
 */
export interface ValueMap {
  /** Translates the record in place. */
  apply(record: MappedRecord): void;
  readonly empty: boolean;
}

export interface ValueDefaults {
  /** Fills fields that are missing or blank, in place. */
  apply(record: MappedRecord): void;
  readonly fields: readonly string[];
  readonly empty: boolean;
}

function replacement(value: unknown, where: string): string {
  const text = scalarText(value);
  if (text === undefined) {
    throw new ConveyorError("definition_invalid", `${where}: the replacement must be text, a number, a boolean or null`, {
      details: { field: where },
      hint: 'Write {"Available": 10} for every field, or {"stock": {"Available": 10}} for one field.',
    });
  }
  return text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function compileValueMap(config: Readonly<Record<string, unknown>> | null | undefined): ValueMap {
  const global = new Map<string, string>();
  const perField = new Map<string, Map<string, string>>();
  for (const [key, value] of Object.entries(config ?? {})) {
    if (isObject(value)) {
      const entries = new Map<string, string>();
      for (const [from, to] of Object.entries(value)) entries.set(from.trim(), replacement(to, `value_map.${key}.${from}`));
      perField.set(key, entries);
    } else {
      global.set(key.trim(), replacement(value, `value_map.${key}`));
    }
  }
  const fieldEntries = [...perField.entries()];
  const empty = global.size === 0 && perField.size === 0;

  const translate = (record: MappedRecord, field: string, entries: Map<string, string> | undefined): void => {
    const value = record[field];
    if (value === undefined) return;
    const key = value.trim();
    const mapped = entries?.get(key) ?? global.get(key);
    if (mapped !== undefined) record[field] = mapped;
  };

  const apply =
    global.size === 0
      ? (record: MappedRecord): void => {
          // Only the fields that have their own map can change: no walk over the record.
          for (const [field, entries] of fieldEntries) translate(record, field, entries);
        }
      : (record: MappedRecord): void => {
          for (const field in record) translate(record, field, perField.get(field));
        };
  return { apply: empty ? () => undefined : apply, empty };
}

export function compileValueDefaults(config: Readonly<Record<string, unknown>> | null | undefined): ValueDefaults {
  const defaults: Array<[string, string]> = [];
  for (const [field, value] of Object.entries(config ?? {})) {
    const text = scalarText(value);
    if (text === undefined) {
      throw new ConveyorError("definition_invalid", `value_map_default.${field}: the default must be text, a number or a boolean`, {
        details: { field: `value_map_default.${field}` },
        hint: 'Write {"shipcarrier": "UPS"}: the value a field takes when it is empty after mapping.',
      });
    }
    defaults.push([field, text]);
  }
  return {
    fields: defaults.map(([field]) => field),
    empty: defaults.length === 0,
    apply(record: MappedRecord): void {
      for (const [field, text] of defaults) if (isBlank(record[field])) record[field] = text;
    },
  };
}
