/**
 * Pointers (issue #26): the rules on an http import's connection, and the
 * values kept in the automation's metadata between runs.
 *
 * @module
 */

export { POINTER_KEEPS, POINTER_NAME, pointerRulesOf, pointerRulesSchema, type PointerKeep, type PointerRule, type PointerRules } from "./rules.js";
export { POINTERS_KEY, pointerValue, pointerViews, readPointers, storedPointers, writePointers, type PointerValues, type PointerView } from "./values.js";
