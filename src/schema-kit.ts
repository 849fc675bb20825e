import { closest, distance } from "fastest-levenshtein";
import { z } from "zod";

// Building blocks of every zod schema a user writes keys for: the definition
// and each connector's connection keys. Every check that can say what is
// allowed does so through `params.allowed`, which `problems.ts` turns into the
// Problem's `allowed` text.

export type Add = (path: (string | number)[], message: string, allowed?: string) => void;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "required" for a missing value, otherwise `${value} ${problem}`: the message of most shape checks. */
export function wrongValue(value: unknown, problem: string): string {
  return value === undefined ? "required" : `${describeValue(value)} ${problem}`;
}

export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** Adds an issue from inside a refinement or transform, with a path relative to the checked value. */
export function issueAdder(ctx: z.RefinementCtx): Add {
  return (path, message, allowed) => {
    ctx.addIssue({ code: "custom", path, message, ...(allowed ? { params: { allowed } } : {}) });
  };
}

/** The names other tools give these keys: a definition written from another tool's habits gets a pointer. */
const OTHER_NAMES: Record<string, string> = { host: "address", hostname: "address", server: "address", url: "address", user: "username", login: "username", pass: "password", passwd: "password" };

/** The known key a mistyped one most likely meant: another tool's name for it, or one or two letters off. */
function suggestKey(key: string, keys: readonly string[]): string | null {
  const lower = key.toLowerCase();
  const named = OTHER_NAMES[lower];
  if (named !== undefined && keys.includes(named)) return named;
  if (keys.length === 0) return null;
  const near = closest(lower, [...keys]);
  return distance(lower, near) <= Math.min(2, Math.ceil(near.length / 3)) ? near : null;
}

/**
 * An object whose unknown keys are refused with the list of valid ones. Loose
 * underneath, so the unknown keys reach the check and every other problem of the
 * object is still reported alongside.
 */
export function known<T extends z.ZodRawShape>(shape: T, what: string) {
  const keys = Object.keys(shape);
  return z.looseObject(shape).superRefine(
    (value, ctx) => {
      for (const key of Object.keys(value)) {
        if (!keys.includes(key)) {
          const guess = suggestKey(key, keys);
          const message = `unknown key "${key}" in ${what}${guess ? `: did you mean "${guess}"?` : ""}`;
          ctx.addIssue({ code: "custom", path: [key], message, params: { allowed: keys.join(", ") } });
        }
      }
    },
    { when: (payload) => isRecord(payload.value) },
  );
}

/** The seed's 0/1 keys: true/false or 1/0. */
export const flag = z.unknown().transform((value, ctx): boolean => {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  issueAdder(ctx)([], wrongValue(value, "is not a boolean"), "true, false, 1 or 0");
  return z.NEVER;
});

// Only the type issue is reworded: length and pattern checks keep their own messages.
export const text = z.string({ error: (iss) => (iss.code === "invalid_type" ? wrongValue(iss.input, "is not text") : undefined) });
export const nonEmpty = text.min(1, { error: "must not be empty" });

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: (iss) => wrongValue(iss.input, "is not allowed") });
}

export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z.unknown().transform((value, ctx): number => {
    if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value;
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} up` : `${min} to ${max}`;
    issueAdder(ctx)([], wrongValue(value, `is not a whole number from ${range}`), max === Number.MAX_SAFE_INTEGER ? `a whole number ≥ ${min}` : `a whole number ${min}–${max}`);
    return z.NEVER;
  });
}

