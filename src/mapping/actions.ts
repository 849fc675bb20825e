import { ConveyorError, isConveyorError } from "../errors.js";
import { compileSearch, parseSearch, searchFields } from "../search/index.js";
import { ACTION_FUNCTIONS, canonicalFunction, compileFunction, writtenFields, type ActionState, type Operation } from "./action-functions.js";
import type { NameResolver } from "./template.js";
import { RowFailure, type ActionRuleConfig } from "./types.js";

/**
 * `vendor_actions` and `service_actions`: rules run top to bottom, a rule's
 * functions in the order written, each rule seeing the changes of the rules
 * before it.
 *
 * Where a rule's `search` condition is tested:
 * - `on: "record"`: on the record as it stands when the rule is reached
 *   (vendor actions on import and export, service actions on export, where the
 *   record is the service's own);
 * - `on: "given"`: on a record passed in by the caller, unchanged by the rules
 *   (service actions on import: the record the service holds, as read in the
 *   scope read). A record the service does not hold yet (a create) is tested
 *   as an empty record: `price:>0` is false, `price:=` is true, a rule without
 *   a condition applies.
 */
export type ConditionTarget = "record" | "given";

export interface ActionOptions<Row> {
  /** `vendor_actions` or `service_actions`: the prefix of every path in messages. */
  key: string;
  on: ConditionTarget;
  resolve: NameResolver<Row>;
  /** Clock for relative dates in conditions (`"-1 day"`); tests pin it. */
  now?: () => Date;
}

export interface CompiledActions<Row> {
  readonly empty: boolean;
  /** Fields the conditions read, as written; `*` when one has a keyword term (it reads every field). */
  readonly conditionFields: readonly string[];
  /**
   * Runs every rule on `state` in place. Returns -1, or the index of the rule
   * whose `skip` dropped the record. A function that fails throws a
   * `RowFailure` whose message names the rule and the function.
   */
  apply(state: ActionState, row: Row | undefined, given?: Readonly<Record<string, unknown>>): number;
}

interface CompiledRule<Row> {
  condition: ((record: Record<string, unknown>) => boolean) | null;
  operations: Array<{ op: Operation<Row>; where: string }>;
}

const EMPTY_RECORD: Readonly<Record<string, unknown>> = Object.freeze(Object.create(null) as Record<string, unknown>);

/** Every field the rules may write (`setValue`, `remapField`, `calculate` targets), in order of appearance. */
export function actionWrites(rules: readonly ActionRuleConfig[] | null | undefined): string[] {
  const out = new Set<string>();
  for (const rule of rules ?? []) {
    for (const fn of rule.functions) {
      const name = canonicalFunction(fn.name);
      if (name !== null) for (const field of writtenFields(name, fn.arg)) out.add(field);
    }
  }
  return [...out];
}

function compileCondition(text: string, where: string, now: (() => Date) | undefined): (record: Record<string, unknown>) => boolean {
  try {
    return compileSearch(text, now === undefined ? {} : { now });
  } catch (err) {
    if (isConveyorError(err)) {
      throw new ConveyorError(err.code, `${where}: ${err.message}`, { cause: err, details: { ...err.details, field: where }, ...(err.hint === undefined ? {} : { hint: err.hint }) });
    }
    throw err;
  }
}

export function compileActions<Row>(rules: readonly ActionRuleConfig[] | null | undefined, options: ActionOptions<Row>): CompiledActions<Row> {
  const compiled: CompiledRule<Row>[] = (rules ?? []).map((rule, index) => {
    const path = `${options.key}[${index}]`;
    const search = rule.search?.trim() ?? "";
    const condition = search === "" ? null : compileCondition(search, `${path}.search`, options.now);
    if (rule.functions.length === 0) {
      throw new ConveyorError("definition_invalid", `${path}: the rule has no function`, {
        details: { field: path },
        hint: `A rule needs one or more of: ${ACTION_FUNCTIONS.join(", ")}.`,
      });
    }
    const operations = rule.functions.map((fn) => {
      const name = canonicalFunction(fn.name);
      const where = `${path}.${fn.name}`;
      if (name === null) {
        throw new ConveyorError("definition_invalid", `${where}: unknown function "${fn.name}"`, {
          details: { field: where },
          hint: `Known functions: ${ACTION_FUNCTIONS.join(", ")} (ignoreField is an alias of ignoreValue).`,
        });
      }
      return { op: compileFunction(name, fn.arg, options.resolve, where), where };
    });
    return { condition, operations };
  });

  const conditionFields = new Set<string>();
  for (const rule of rules ?? []) {
    const search = rule.search?.trim() ?? "";
    if (search !== "") for (const field of searchFields(parseSearch(search))) conditionFields.add(field);
  }
  const on = options.on;
  return {
    empty: compiled.length === 0,
    conditionFields: [...conditionFields],
    apply(state, row, given) {
      let where = options.key;
      try {
        for (let i = 0; i < compiled.length; i++) {
          const rule = compiled[i];
          if (rule === undefined) continue;
          if (rule.condition !== null && !rule.condition(on === "given" ? (given ?? EMPTY_RECORD) : state.record)) continue;
          for (const { op, where: at } of rule.operations) {
            where = at;
            if (op(state, row)) return i;
          }
        }
        return -1;
      } catch (err) {
        if (err instanceof RowFailure) throw new RowFailure(`${where}: ${err.message}`, err.field);
        // A condition or function that throws anything else is still one record's problem, not the run's.
        throw new RowFailure(`${where}: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  };
}
