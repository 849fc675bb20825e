/**
 * The search language (spec/search.md): parse once into a plain data tree,
 * evaluate it on records in memory, or hand the text on to the service.
 *
 * @module
 */

// Every type of the language: the tree, the records it reads, the options.
export type * from "./types.js";
export { parseSearch, MAX_DEPTH } from "./parser.js";
export { matchesSearch, compileSearch } from "./evaluate.js";
export { searchFields, usesClock, isMatchAll, formatSearch, quoteSearchValue, ALL_FIELDS } from "./tree.js";
export { shortcutSearch, ORDER_STATUSES, type OrderStatus } from "./shortcuts.js";
export { readNumber, readDate, readRelative, resolveRelative } from "./values.js";
