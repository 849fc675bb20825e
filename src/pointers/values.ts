/**
 * Where pointer values live: the automation's metadata in the state store,
 * under `pointers`, as `{ NAME: "value" }`. Each write reads the metadata
 * afresh and replaces only that key, so tokens a connector cached meanwhile
 * are kept.
 *
 * @module
 */

import { isRecord } from "../schema-kit.js";
import type { StateStore } from "../state/index.js";
import type { PointerRules } from "./rules.js";

export const POINTERS_KEY = "pointers";

export type PointerValues = Record<string, string>;

/** One pointer as the API and `conveyor show` present it. */
export interface PointerView {
  value: string | null;
  initial: string | null;
}

/** The stored values: text only; anything else a hand edit left is not a value. */
export function storedPointers(metadata: Record<string, unknown>): PointerValues {
  const raw = metadata[POINTERS_KEY];
  if (!isRecord(raw)) return {};
  const out: PointerValues = {};
  for (const [name, value] of Object.entries(raw)) if (typeof value === "string") out[name] = value;
  return out;
}

export async function readPointers(store: StateStore, automation: string): Promise<PointerValues> {
  return storedPointers(await store.getMetadata(automation));
}

/** Sets the values given; `null` forgets one, so it reads its initial value again. */
export async function writePointers(store: StateStore, automation: string, changes: Record<string, string | null>): Promise<PointerValues> {
  const metadata = await store.getMetadata(automation);
  const next = storedPointers(metadata);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  await store.setMetadata(automation, { ...metadata, [POINTERS_KEY]: next });
  return next;
}

/** What `{{pointer.NAME}}` reads: the stored value, else the rule's initial value. */
export function pointerValue(rules: PointerRules, stored: PointerValues, name: string): string | undefined {
  return stored[name] ?? rules[name]?.initial;
}

/** Every ruled pointer with its stored and initial value, then any stored one whose rule is gone. */
export function pointerViews(rules: PointerRules, stored: PointerValues): Record<string, PointerView> {
  const out: Record<string, PointerView> = {};
  for (const [name, rule] of Object.entries(rules)) out[name] = { value: stored[name] ?? null, initial: rule.initial ?? null };
  for (const [name, value] of Object.entries(stored)) out[name] ??= { value, initial: null };
  return out;
}
