import { formatPath } from "./definition/problems.js";

/**
 * The limits every JSON a user hands Conveyor is held to, before any code
 * walks it: API bodies, definition files, stored definitions. The code that
 * walks a definition (cloning, merging, masking, validating) recurses, so a
 * document nested a few thousand levels deep overflows the stack; and a key
 * named `__proto__` turns into the prototype of the object a spread or merge
 * copies it into. Both are refused here, with the place named.
 */

/**
 * The deepest nesting of objects and arrays allowed. The deepest real
 * definition (a file config's `vendor_actions` with conditions inside
 * metadata) stays far below it; order and log bodies are shallower still.
 */
export const MAX_JSON_DEPTH = 64;

/** Keys that name an object's prototype machinery instead of a field: refused wherever a user names a key. */
export const PROTOTYPE_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

export function isPrototypeKey(key: string): boolean {
  return PROTOTYPE_KEYS.includes(key);
}

/** The allowed-keys half of every refusal, so they all read alike. */
export const PROTOTYPE_KEYS_RULE = `the keys ${PROTOTYPE_KEYS.join(", ")} are refused: they would reach the prototype of the objects Conveyor builds; rename the key`;

/**
 * How deep objects and arrays nest in a JSON text, counted on the text itself
 * (one pass, no recursion), so a refusal never needs the document parsed.
 * Brackets inside strings do not count.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** How deep a parsed value nests, walked without recursion; stops counting past `stopAt`. */
export function valueDepth(value: unknown, stopAt = Number.MAX_SAFE_INTEGER): number {
  let max = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.value === null || typeof next.value !== "object") continue;
    const depth = next.depth + 1;
    if (depth > max) max = depth;
    if (max > stopAt) return max;
    for (const child of Object.values(next.value)) stack.push({ value: child, depth });
  }
  return max;
}

/** "the body nests 3000 levels deep; at most 64 are allowed" — `what` is the body, the definition, the file. */
export function depthMessage(what: string, depth: number): string {
  return `${what} nests ${depth} levels deep; at most ${MAX_JSON_DEPTH} are allowed (objects and arrays inside one another)`;
}

export interface PrototypeKey {
  key: string;
  /** Where it is: `file_configs[0].field_map["__proto__"]`. */
  path: string;
}

/** The prototype keys of a parsed value, at most `limit` of them, in document order; walked without recursion. */
export function findPrototypeKeys(value: unknown, limit = Number.MAX_SAFE_INTEGER): PrototypeKey[] {
  const found: PrototypeKey[] = [];
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  for (let next = stack.pop(); next !== undefined && found.length < limit; next = stack.pop()) {
    const v = next.value;
    if (v === null || typeof v !== "object") continue;
    const entries = Array.isArray(v) ? v.map((child: unknown, i): [PropertyKey, unknown] => [i, child]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      if (entry) stack.push({ value: entry[1], path: [...next.path, entry[0]] });
    }
    for (const [key] of entries) if (typeof key === "string" && isPrototypeKey(key)) found.push({ key, path: formatPath([...next.path, key]) });
  }
  return found.slice(0, limit);
}

/** The first prototype key of a parsed value, or undefined when it has none. */
export function findPrototypeKey(value: unknown): PrototypeKey | undefined {
  return findPrototypeKeys(value, 1)[0];
}

/** `the body names the key "__proto__" at header["__proto__"]; the keys … are refused …` */
export function prototypeKeyMessage(what: string, found: PrototypeKey): string {
  return `${what} names the key ${JSON.stringify(found.key)} at ${found.path}; ${PROTOTYPE_KEYS_RULE}`;
}
