/**
 * The pointers `conveyor show` prints beside the definition: each one's
 * stored value and initial value, read from the state store under the key
 * the automation's runs use (a stored automation's id, or the file's slug).
 *
 * @module
 */

import type { Settings } from "../config.js";
import type { Automation } from "../definition/index.js";
import { DEFAULT_API_USER } from "../embedded/index.js";
import { createLogger } from "../log.js";
import { pointerRulesOf, pointerViews, readPointers, type PointerView } from "../pointers/index.js";
import { maskDeep } from "../secrets.js";
import { openStore } from "../state/index.js";
import { targetOf } from "./run-target.js";

export interface ShownPointers {
  /** Where the values are kept: the key of the automation's runs. */
  automation: string;
  pointers: Record<string, PointerView>;
}

/** Null when the connection keeps no pointer: the state store is then not opened (nor created). */
export async function shownPointers(file: string, automation: Automation, settings: Settings): Promise<ShownPointers | null> {
  const rules = pointerRulesOf(automation.connection);
  if (Object.keys(rules).length === 0) return null;
  const store = await openStore(settings);
  try {
    const target = await targetOf(file, settings, store, settings.apiUser ?? DEFAULT_API_USER, createLogger({ level: "warn" }));
    return { automation: target.key, pointers: maskDeep(pointerViews(rules, await readPointers(store, target.key))) };
  } finally {
    await store.close();
  }
}

/** One line per pointer: `since = 2026-01-01T00:00:00Z (initial 2025-01-01)`; `(not set)` before a run has set it. */
export function pointerLines(shown: ShownPointers): string {
  const lines = Object.entries(shown.pointers).map(([name, p]) => `  ${name} = ${p.value ?? "(not set)"}${p.initial === null ? "" : ` (initial ${p.initial})`}`);
  return `pointers of ${shown.automation}:\n${lines.join("\n")}\n`;
}
