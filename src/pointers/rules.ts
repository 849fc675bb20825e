/**
 * The pointer rules of an http import (`connection.pointers`): named cursors
 * the run sets from the records it read and that templates and request
 * strings read back as `{{pointer.NAME}}`. The shape is shared with the http
 * spec, which lists `pointers` among its keys.
 *
 * @module
 */

import { z } from "zod";
import { isRecord, issueAdder, known, nonEmpty, oneOf } from "../schema-kit.js";

/** A pointer name is also a template variable (`pointer.since`): an identifier, nothing a path could split. */
export const POINTER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const POINTER_KEEPS = ["max", "last"] as const;

export type PointerKeep = (typeof POINTER_KEEPS)[number];

export interface PointerRule {
  /** A value of each record read, named as a field_map value names one (column, JSONPath or XPath). */
  from: string;
  /** `max`: the largest value seen; `last`: the last record's. */
  keep: PointerKeep;
  /** What `{{pointer.NAME}}` reads before a run has set the pointer, or after a reset. */
  initial?: string;
}

export type PointerRules = Record<string, PointerRule>;

const ruleSchema = known(
  {
    from: nonEmpty,
    keep: oneOf(POINTER_KEEPS).optional(),
    // A number written for an offset or an id is kept as the text templates print.
    initial: z.union([z.string(), z.number()]).transform(String).optional(),
  },
  "a pointer",
);

/** `connection.pointers`: `{ NAME: { from, keep?, initial? } }`; `keep` defaults to `max`. */
export const pointerRulesSchema = z
  .record(z.string(), ruleSchema)
  .superRefine((rules, ctx) => {
    const add = issueAdder(ctx);
    for (const name of Object.keys(rules)) {
      if (!POINTER_NAME.test(name)) add([name], `${JSON.stringify(name)} is not a pointer name`, "letters, digits and _, not starting with a digit");
    }
    // Checked with the rules' own problems, so one pass over the definition reports them all.
  }, { when: (payload) => isRecord(payload.value) })
  .transform((rules): PointerRules => {
    const out: PointerRules = {};
    for (const [name, rule] of Object.entries(rules)) out[name] = { from: rule.from, keep: rule.keep ?? "max", ...(rule.initial !== undefined ? { initial: rule.initial } : {}) };
    return out;
  });

/** The rules of a parsed connection, or none: a connection without `pointers` keeps no cursor. */
export function pointerRulesOf(connection: unknown): PointerRules {
  if (!isRecord(connection) || connection.pointers === undefined || connection.pointers === null) return {};
  const parsed = pointerRulesSchema.safeParse(connection.pointers);
  return parsed.success ? parsed.data : {};
}
