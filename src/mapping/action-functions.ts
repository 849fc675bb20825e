import { ConveyorError } from "../errors.js";
import { compileExpression, formatNumber } from "./calculate.js";
import { compileTemplate, type NameResolver } from "./template.js";
import { RowFailure, scalarText, type MappedRecord } from "./types.js";

/**
 * The functions of an action rule (automations.md, "Action rules"), each
 * compiled once into an operation on the record being mapped.
 *
 * Where the spec is silent:
 * - text functions (`replace`, `prefix`, `suffix`, `trim`, `uppercase`,
 *   `lowercase`, `truncate`) leave a field that is not in the record alone:
 *   they never create a field the mapping did not produce (an empty string is
 *   present, and is changed);
 * - `remapField` from a field that is not in the record leaves the target
 *   alone, so a dropped or ignored field is never turned into a blank write;
 * - any function that writes a field takes it off the ignored set again: the
 *   later rule wins, as rules are applied in order;
 * - a regular expression in `replace` replaces every match (as the service's
 *   engine does); flags i, m, s, u are honoured.
 */

/** What a record carries through the rules: the fields, and the fields to leave alone (allocated on first use). */
export interface ActionState {
  record: MappedRecord;
  ignored: Set<string> | null;
}

/** One compiled function; returns true when the record is to be skipped. */
export type Operation<Row> = (state: ActionState, row: Row | undefined) => boolean;

export const ACTION_FUNCTIONS = [
  "setValue",
  "ignoreValue",
  "remapField",
  "calculate",
  "replace",
  "prefix",
  "suffix",
  "trim",
  "uppercase",
  "lowercase",
  "truncate",
  "skip",
] as const;
export type ActionFunctionName = (typeof ACTION_FUNCTIONS)[number];

const BY_LOWER_NAME = new Map<string, ActionFunctionName>([
  ...ACTION_FUNCTIONS.map((name) => [name.toLowerCase(), name] as [string, ActionFunctionName]),
  ["ignorefield", "ignoreValue"],
]);

/** The canonical name of a function as written (`ignoreField` → `ignoreValue`), or null. */
export function canonicalFunction(name: string): ActionFunctionName | null {
  return BY_LOWER_NAME.get(name.toLowerCase()) ?? null;
}

export function writeField(state: ActionState, field: string, value: string): void {
  state.record[field] = value;
  if (state.ignored !== null) state.ignored.delete(field);
}

function badArgument(where: string, expected: string): ConveyorError {
  return new ConveyorError("definition_invalid", `${where}: ${expected}`, { details: { field: where }, hint: "See the action table in the automation documentation for each function's argument." });
}

function objectArg(arg: unknown, where: string, example: string): Array<[string, unknown]> {
  if (typeof arg !== "object" || arg === null || Array.isArray(arg)) throw badArgument(where, `expects an object such as ${example}`);
  const entries = Object.entries(arg);
  if (entries.length === 0) throw badArgument(where, `names no field; write ${example}`);
  return entries;
}

function fieldsArg(arg: unknown, where: string): string[] {
  const list = typeof arg === "string" ? [arg] : arg;
  if (!Array.isArray(list) || list.length === 0 || !list.every((f): f is string => typeof f === "string" && f !== "")) {
    throw badArgument(where, 'expects a field name or an array of field names, such as ["title", "brand"]');
  }
  return list;
}

function textArg(value: unknown, where: string): string {
  const text = scalarText(value);
  if (text === undefined) throw badArgument(where, "expects text or a number");
  return text;
}

/** Fields a function may write; the mapper uses it to know every field a template may name. */
export function writtenFields(name: ActionFunctionName, arg: unknown): string[] {
  if (name === "setValue" || name === "remapField" || name === "calculate") {
    return typeof arg === "object" && arg !== null && !Array.isArray(arg) ? Object.keys(arg) : [];
  }
  return [];
}

/** Applies `change` to each named field that the record has. */
function eachPresent<Row>(fields: string[], change: (value: string) => string): Operation<Row> {
  return (state) => {
    const record = state.record;
    for (const field of fields) {
      const value = record[field];
      if (value !== undefined) record[field] = change(value);
    }
    return false;
  };
}

/** Applies a per-field change to each field of an object argument that the record has. */
function perField<Row>(entries: Array<[string, (value: string) => string]>): Operation<Row> {
  return (state) => {
    const record = state.record;
    for (const [field, change] of entries) {
      const value = record[field];
      if (value !== undefined) record[field] = change(value);
    }
    return false;
  };
}

function compileReplace(pattern: string, replacement: string, where: string): (value: string) => string {
  const regex = /^\/(.*)\/([a-z]*)$/s.exec(pattern);
  if (regex === null) {
    if (pattern === "") throw badArgument(where, "has an empty pattern");
    return (value) => (value.includes(pattern) ? value.split(pattern).join(replacement) : value);
  }
  const [, body = "", flags = ""] = regex;
  let compiled: RegExp;
  try {
    compiled = new RegExp(body, flags.includes("g") ? flags : `${flags}g`);
  } catch (err) {
    throw badArgument(where, `${JSON.stringify(pattern)} is not a valid regular expression (${err instanceof Error ? err.message : String(err)})`);
  }
  return (value) => value.replace(compiled, replacement);
}

/** Cuts to `length` UTF-16 units without splitting a surrogate pair. */
function truncateTo(length: number): (value: string) => string {
  return (value) => {
    if (value.length <= length) return value;
    const code = value.charCodeAt(length - 1);
    return value.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
  };
}

/** Compiles one function of a rule. `where` is its definition path (`vendor_actions[1].calculate`). */
export function compileFunction<Row>(name: ActionFunctionName, arg: unknown, resolve: NameResolver<Row>, where: string): Operation<Row> {
  switch (name) {
    case "setValue": {
      const sets = objectArg(arg, where, '{"condition": "New"}').map(([field, value]) => [field, compileTemplate(textArg(value, `${where}.${field}`), resolve, `${where}.${field}`)] as const);
      return (state, row) => {
        for (const [field, template] of sets) writeField(state, field, template.constant ?? template.evaluate(state.record, row));
        return false;
      };
    }
    case "ignoreValue": {
      const fields = fieldsArg(arg, where);
      return (state) => {
        const ignored = (state.ignored ??= new Set<string>());
        for (const field of fields) {
          delete state.record[field];
          ignored.add(field);
        }
        return false;
      };
    }
    case "remapField": {
      const copies = objectArg(arg, where, '{"mpn": "sku"}').map(([target, from]) => {
        const source = textArg(from, `${where}.${target}`);
        const reader = resolve(source);
        if (reader === null) throw badArgument(`${where}.${target}`, `"${source}" is no mapped field and no column of the file`);
        return [target, reader] as const;
      });
      return (state, row) => {
        for (const [target, reader] of copies) {
          const value = reader(state.record, row);
          if (value !== undefined) writeField(state, target, value);
        }
        return false;
      };
    }
    case "calculate": {
      const formulas = objectArg(arg, where, '{"price": "round(cost * 1.35 + 2, 2)"}').map(
        ([field, text]) => [field, compileExpression(textArg(text, `${where}.${field}`), resolve, `${where}.${field}`)] as const,
      );
      return (state, row) => {
        for (const [field, formula] of formulas) {
          try {
            writeField(state, field, formatNumber(formula.evaluate(state.record, row)));
          } catch (err) {
            if (err instanceof RowFailure) throw new RowFailure(`${field} = ${formula.source}: ${err.message}`, err.field ?? field);
            throw err;
          }
        }
        return false;
      };
    }
    case "replace":
      return perField(
        objectArg(arg, where, '{"title": ["/\\\\s+/", " "]}').map(([field, pair]) => {
          if (!Array.isArray(pair) || pair.length !== 2) throw badArgument(`${where}.${field}`, "expects [pattern, replacement]");
          return [field, compileReplace(textArg(pair[0], `${where}.${field}`), textArg(pair[1], `${where}.${field}`), `${where}.${field}`)];
        }),
      );
    case "prefix":
    case "suffix":
      return perField(
        objectArg(arg, where, '{"sku": "ACME-"}').map(([field, value]) => {
          const text = textArg(value, `${where}.${field}`);
          return [field, name === "prefix" ? (v: string) => text + v : (v: string) => v + text];
        }),
      );
    case "trim":
      return eachPresent(fieldsArg(arg, where), (v) => v.trim());
    case "uppercase":
      return eachPresent(fieldsArg(arg, where), (v) => v.toUpperCase());
    case "lowercase":
      return eachPresent(fieldsArg(arg, where), (v) => v.toLowerCase());
    case "truncate":
      return perField(
        objectArg(arg, where, '{"title": 80}').map(([field, value]) => {
          const length = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
          if (typeof length !== "number" || !Number.isInteger(length) || length < 1) throw badArgument(`${where}.${field}`, "expects a whole number of characters, 1 or more");
          return [field, truncateTo(length)];
        }),
      );
    case "skip": {
      if (arg === false || arg === 0 || arg === "0") return () => false;
      if (arg === true || arg === 1 || arg === "1" || arg === "true") return () => true;
      throw badArgument(where, "expects true");
    }
  }
}
