/**
 * Pointers over the API: the listing and the fetch show an automation's
 * current pointers in `metadata.pointers` (what `{{pointer.NAME}}` reads), and
 * a `PATCH` with `{"metadata": {"pointers": {NAME: value | null}}}` sets one in
 * the state store (null: back to its initial value) instead of writing it into
 * the definition, where the run would never read it.
 *
 * @module
 */

import { describeProblem, type Automation, type Problem } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { POINTER_NAME, pointerRulesOf, pointerValue, readPointers, writePointers, type PointerRules } from "../../pointers/index.js";
import { isRecord } from "../../schema-kit.js";
import type { StateStore } from "../../state/index.js";

type Json = Record<string, unknown>;

export interface PointerPatch {
  /** The patch without `metadata.pointers`, for the definition. */
  rest: Json;
  /** Null when the patch names no pointer. */
  pointers: Record<string, string | null> | null;
}

/** Takes `metadata.pointers` out of a patch body, checking its values are text or null. */
export function splitPointerPatch(body: unknown): PointerPatch {
  if (!isRecord(body) || !isRecord(body.metadata) || !("pointers" in body.metadata)) return { rest: isRecord(body) ? body : {}, pointers: null };
  const { pointers: raw, ...metadata } = body.metadata;
  const rest: Json = { ...body };
  if (Object.keys(metadata).length > 0) rest.metadata = metadata;
  else delete rest.metadata;
  const problems: Problem[] = [];
  const pointers: Record<string, string | null> = {};
  if (!isRecord(raw)) problems.push({ path: "metadata.pointers", message: "must be an object of pointer names", allowed: '{"NAME": "value"} to set one, {"NAME": null} to reset it to its initial value' });
  else {
    for (const [name, value] of Object.entries(raw)) {
      if (!POINTER_NAME.test(name)) problems.push({ path: `metadata.pointers.${name}`, message: `${JSON.stringify(name)} is not a pointer name`, allowed: "letters, digits and _, not starting with a digit" });
      else if (value === null || typeof value === "string") pointers[name] = value;
      else if (typeof value === "number") pointers[name] = String(value);
      else problems.push({ path: `metadata.pointers.${name}`, message: "must be text, a number or null", allowed: "a value to set, or null to reset the pointer to its initial value" });
    }
  }
  if (problems.length > 0) throw invalid(problems);
  return { rest, pointers };
}

/** Only pointers a rule defines can be set: a name the rules do not know would be stored and never read. */
export function checkPointerNames(changes: Record<string, string | null>, rules: PointerRules): void {
  const known = Object.keys(rules);
  const problems: Problem[] = Object.keys(changes)
    .filter((name) => !Object.hasOwn(rules, name))
    .map((name) => ({ path: `metadata.pointers.${name}`, message: `the automation has no pointer "${name}"`, allowed: known.length > 0 ? known.join(", ") : "none: connection.pointers defines no pointer" }));
  if (problems.length > 0) throw invalid(problems);
}

export async function applyPointerPatch(store: StateStore, key: string, changes: Record<string, string | null>): Promise<void> {
  if (Object.keys(changes).length > 0) await writePointers(store, key, changes);
}

/**
 * A PATCH of a custom or installed automation: `metadata.pointers` is checked
 * against the rules (the stored ones and, for a custom automation, a
 * connection the same patch brings) and written to the state store; the rest
 * of the body, if any, goes to `patchDefinition`.
 */
export async function patchWithPointers(
  body: unknown,
  store: StateStore,
  key: string,
  current: () => Promise<Automation>,
  patchDefinition: (rest: unknown) => Promise<unknown>,
): Promise<void> {
  const { rest, pointers } = splitPointerPatch(body);
  if (!pointers) {
    await patchDefinition(body);
    return;
  }
  const rules = { ...pointerRulesOf((await current()).connection), ...pointerRulesOf(isRecord(rest.connection) ? rest.connection : undefined) };
  checkPointerNames(pointers, rules);
  if (Object.keys(rest).length > 0) await patchDefinition(rest);
  await applyPointerPatch(store, key, pointers);
}

/** The pointers `{{pointer.NAME}}` reads now: stored, else initial; null when the connection keeps none. */
export async function currentPointers(store: StateStore, key: string, automation: Automation): Promise<Record<string, string> | null> {
  const rules = pointerRulesOf(automation.connection);
  const stored = await readPointers(store, key);
  const names = new Set([...Object.keys(rules), ...Object.keys(stored)]);
  if (names.size === 0) return null;
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = pointerValue(rules, stored, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The definition's metadata with the current pointers merged in (they win over any written in the definition). */
export function withPointers(metadata: Json | null, pointers: Record<string, string> | null): Json | null {
  if (pointers === null) return metadata;
  const written = metadata !== null && isRecord(metadata.pointers) ? metadata.pointers : {};
  return { ...(metadata ?? {}), pointers: { ...written, ...pointers } };
}

function invalid(problems: Problem[]): ConveyorError {
  const messages = problems.map(describeProblem);
  return new ConveyorError("definition_invalid", messages.join("; "), { details: { problems: messages } });
}
