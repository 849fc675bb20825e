import { depthMessage, findPrototypeKeys, isPrototypeKey, MAX_JSON_DEPTH, PROTOTYPE_KEYS, valueDepth } from "../json-limits.js";
import { formatPath } from "./problems.js";
import { isRecord } from "./schema-common.js";
import type { Problem } from "./types.js";

/**
 * The limits a definition meets before anything walks it: how deep it nests,
 * and no key or field name that would reach an object's prototype. Checked
 * first by parseAutomation, so a definition from a file, the API or the
 * state database is refused alike, with the place named, instead of
 * overflowing the stack of the code that clones, merges and validates it.
 */

/**
 * The largest definition, as a file or an API body. A definition is a few
 * kilobytes; a large value_map (a mapping table of tens of thousands of
 * entries) is what comes near this.
 */
export const MAX_DEFINITION_BYTES = 8 * 1024 * 1024;

/** More problems of one kind than this are one mistake repeated: the first ones are enough to fix it. */
const MAX_REPORTED = 20;

const ALLOWED = `any name but ${PROTOTYPE_KEYS.join(", ")}`;

function named(path: PropertyKey[], what: string, name: string): Problem {
  return { path: formatPath(path), message: `${what} ${JSON.stringify(name)} is refused: it would reach the prototype of the records Conveyor builds`, allowed: ALLOWED };
}

/** A source column may be a path into a JSON or XML record (`shipments.tracking`): each segment is a name. */
function namesPrototype(source: string): boolean {
  return isPrototypeKey(source) || source.split(".").some(isPrototypeKey);
}

/** Names a definition gives as values: parameter names, source columns, the identifier, the diff fields. */
function namedValueProblems(raw: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  if (Array.isArray(raw.parameters)) {
    raw.parameters.forEach((p: unknown, i) => {
      if (isRecord(p) && typeof p.name === "string" && isPrototypeKey(p.name)) problems.push(named(["parameters", i, "name"], "the parameter name", p.name));
    });
  }
  if (!Array.isArray(raw.file_configs)) return problems;
  raw.file_configs.forEach((fc: unknown, i) => {
    if (!isRecord(fc)) return;
    if (isRecord(fc.field_map)) {
      for (const [field, source] of Object.entries(fc.field_map)) {
        if (typeof source === "string" && namesPrototype(source)) problems.push(named(["file_configs", i, "field_map", field], "the source column", source));
      }
    }
    if (typeof fc.identifier === "string" && isPrototypeKey(fc.identifier)) problems.push(named(["file_configs", i, "identifier"], "the identifier field", fc.identifier));
    if (Array.isArray(fc.diff_fields)) {
      fc.diff_fields.forEach((f: unknown, j) => {
        if (typeof f === "string" && isPrototypeKey(f)) problems.push(named(["file_configs", i, "diff_fields", j], "the field", f));
      });
    }
  });
  return problems;
}

/** Every limit the definition breaks; empty when it may be parsed. A definition too deep is reported alone: nothing else of it is walked. */
export function structureProblems(raw: unknown): Problem[] {
  const depth = valueDepth(raw);
  if (depth > MAX_JSON_DEPTH) return [{ path: "", message: depthMessage("the definition", depth), allowed: `at most ${MAX_JSON_DEPTH} levels of objects and arrays` }];
  const problems: Problem[] = findPrototypeKeys(raw, MAX_REPORTED).map((found) => ({
    path: found.path,
    message: `the key ${JSON.stringify(found.key)} is refused: it would reach the prototype of the objects Conveyor builds`,
    allowed: ALLOWED,
  }));
  if (isRecord(raw)) problems.push(...namedValueProblems(raw));
  return problems.slice(0, MAX_REPORTED);
}
