import { z } from "zod";
import { CALCULATE_ALLOWED, checkCalculate } from "./calculate-syntax.js";
import { checkReplacePattern } from "./checks.js";
import { hasPlaceholder } from "./placeholders.js";
import { describeValue, isRecord, issueAdder, type Add } from "./schema-common.js";
import { ACTION_FUNCTIONS, type ActionFunction, type ActionRule, type Scalar } from "./types.js";

/**
 * An action rule is written as one object: an optional `search` condition and
 * one key per function, applied in the order written:
 * `{"search": "stock:<1", "setValue": {"status": "Out"}, "trim": "title"}`.
 * To use a function twice, write two rules (later rules see earlier changes).
 */

const ALLOWED_FUNCTIONS = [...ACTION_FUNCTIONS, "ignoreField (= ignoreValue)"].join(", ");

type Build = (arg: unknown, at: (string | number)[], add: Add) => ActionFunction | null;

function fieldMap<T>(arg: unknown, at: (string | number)[], add: Add, what: string, example: string, item: (v: unknown, p: (string | number)[]) => T | null): Record<string, T> | null {
  if (!isRecord(arg) || Object.keys(arg).length === 0) {
    add(at, `expected an object of field → ${what}, got ${describeValue(arg)}`, example);
    return null;
  }
  const out: Record<string, T> = {};
  let ok = true;
  for (const [field, value] of Object.entries(arg)) {
    const v = item(value, [...at, field]);
    if (v === null) ok = false;
    else out[field] = v;
  }
  return ok ? out : null;
}

function fields(arg: unknown, at: (string | number)[], add: Add): string[] | null {
  const list = typeof arg === "string" ? [arg] : arg;
  if (Array.isArray(list) && list.length > 0 && list.every((v) => typeof v === "string" && v !== "")) return list as string[];
  add(at, `expected a field name or an array of field names, got ${describeValue(arg)}`, '"title" or ["title", "brand"]');
  return null;
}

function textValue(add: Add, what: string) {
  return (v: unknown, p: (string | number)[]): string | null => {
    if (typeof v === "string") return v;
    add(p, `expected ${what}, got ${describeValue(v)}`);
    return null;
  };
}

const BUILDERS: Record<string, Build> = {
  setValue: (arg, at, add) => {
    const m = fieldMap<Scalar>(arg, at, add, "value", '{"status": "Active", "title": "{{brand}} {{model}}"}', (v, p) => {
      if (v === null || ["string", "number", "boolean"].includes(typeof v)) return v as Scalar;
      add(p, `expected a plain value, got ${describeValue(v)}`);
      return null;
    });
    return m && { name: "setValue", arg: m };
  },
  remapField: (arg, at, add) => {
    const m = fieldMap(arg, at, add, "source field", '{"mpn": "sku"}', textValue(add, "a source field name"));
    return m && { name: "remapField", arg: m };
  },
  calculate: (arg, at, add) => {
    const m = fieldMap(arg, at, add, "expression", '{"price": "round(cost * 1.35 + 2, 2)"}', (v, p) => {
      if (typeof v !== "string") return textValue(add, "an expression")(v, p);
      const wrong = hasPlaceholder(v) ? null : checkCalculate(v);
      if (wrong) add(p, `invalid expression: ${wrong}`, CALCULATE_ALLOWED);
      return wrong ? null : v;
    });
    return m && { name: "calculate", arg: m };
  },
  replace: (arg, at, add) => {
    const m = fieldMap<[string, string]>(arg, at, add, "[pattern, replacement]", '{"title": ["/\\\\s+/g", " "]}', (v, p) => {
      if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "string" || typeof v[1] !== "string" || v[0] === "") {
        add(p, `expected [pattern, replacement], got ${describeValue(v)}`, 'two texts: ["old", "new"] or ["/regex/flags", "new"]');
        return null;
      }
      const wrong = checkReplacePattern(v[0]);
      if (wrong) add([...p, 0], wrong);
      return wrong ? null : [v[0], v[1]];
    });
    return m && { name: "replace", arg: m };
  },
  prefix: (arg, at, add) => {
    const m = fieldMap(arg, at, add, "text", '{"sku": "ACME-"}', textValue(add, "text"));
    return m && { name: "prefix", arg: m };
  },
  suffix: (arg, at, add) => {
    const m = fieldMap(arg, at, add, "text", '{"title": " (refurbished)"}', textValue(add, "text"));
    return m && { name: "suffix", arg: m };
  },
  truncate: (arg, at, add) => {
    const m = fieldMap(arg, at, add, "length", '{"title": 80}', (v, p) => {
      // The mapper refuses 0 as well: cut to nothing, the field would be blanked, which resets it in the service.
      if (typeof v === "number" && Number.isInteger(v) && v >= 1) return v;
      add(p, `expected a length (whole number ≥ 1), got ${describeValue(v)}`);
      return null;
    });
    return m && { name: "truncate", arg: m };
  },
  skip: (arg, at, add) => {
    if (arg === true || arg === 1) return { name: "skip", arg: true };
    add(at, `expected true, got ${describeValue(arg)}`, "true");
    return null;
  },
};
for (const name of ["ignoreValue", "trim", "uppercase", "lowercase"] as const) {
  BUILDERS[name] = (arg, at, add) => {
    const list = fields(arg, at, add);
    return list && { name, arg: list };
  };
}
BUILDERS.ignoreField = BUILDERS.ignoreValue as Build;

/** One rule: validated, functions in written order, aliases and field-or-array arguments normalized. */
export const actionRuleSchema = z.unknown().transform((raw, ctx): ActionRule => {
  const add = issueAdder(ctx);
  if (!isRecord(raw)) {
    add([], `expected a rule object, got ${describeValue(raw)}`, `{"search"?: "...", <function>: <argument>}; functions: ${ALLOWED_FUNCTIONS}`);
    return z.NEVER;
  }
  const rule: ActionRule = { functions: [] };
  let ok = true;
  for (const [key, arg] of Object.entries(raw)) {
    if (key === "search") {
      if (typeof arg === "string") rule.search = arg;
      else {
        add([key], `expected a search expression, got ${describeValue(arg)}`);
        ok = false;
      }
      continue;
    }
    // Own keys only: a rule named valueOf or __proto__ must not find Object's method.
    const build = Object.hasOwn(BUILDERS, key) ? BUILDERS[key] : undefined;
    if (!build) {
      add([key], `unknown action function "${key}"`, `search, ${ALLOWED_FUNCTIONS}`);
      ok = false;
      continue;
    }
    const fn = build(arg, [key], add);
    if (fn) rule.functions.push(fn);
    else ok = false;
  }
  if (ok && rule.functions.length === 0) {
    add([], "a rule needs at least one function", ALLOWED_FUNCTIONS);
    ok = false;
  }
  return ok ? rule : z.NEVER;
});

export const actionRulesSchema = z.array(actionRuleSchema, { error: (iss) => (iss.code === "invalid_type" ? `expected an array of rules, got ${describeValue(iss.input)}` : undefined) });
