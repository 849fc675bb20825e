import { z } from "zod";
import { LIMIT_ALLOWED, parseLimit } from "./checks.js";
import { describeValue, isRecord, issueAdder, type Add } from "./schema-common.js";
import type { ChangeLimits, FieldChangeLimit, Limit } from "./types.js";

/**
 * `file_configs[].change_limits` (our extension, issue #33): per field, how
 * many records in scope one run may set to zero or empty (`zeroed`), and how
 * many it may move by more than a percentage (`moved` with `share`). A
 * product import carries the defaults below unless its definition turns them
 * off; the guard (src/pipeline/import/change-guard.ts) weighs the plan
 * against them.
 */

/**
 * What a product import gets when its definition names no limit for the field.
 * Chosen so that a nightly feed passes (a supplier sells out of some items, a
 * price list moves a few prices a lot) and the two disasters stop: every stock
 * zeroed, prices shifted by a column (price holding the cost, the stock or a
 * weight). README.md, "Change limits", says why each.
 */
export const DEFAULT_CHANGE_LIMITS: Readonly<Record<string, FieldChangeLimit>> = {
  stock: { zeroed: { kind: "share", value: 0.5 } },
  price: { zeroed: { kind: "share", value: 0.05 }, moved: { percent: 30, share: { kind: "share", value: 0.1 } } },
};

/** The share `moved` asks for when a definition gives `moved` alone. */
const DEFAULT_MOVED_SHARE: Limit = { kind: "share", value: 0.1 };

const FIELD_KEYS = ["zeroed", "moved", "share"] as const;
export const CHANGE_LIMITS_ALLOWED = 'an object of field → {zeroed, moved, share}, e.g. {"stock": {"zeroed": "20%"}, "price": {"moved": "30%", "share": "5%"}}; false turns every limit off';
const FIELD_ALLOWED = '{"zeroed": limit, "moved": "30%", "share": limit}, each key optional; false or null turns the field\'s limits off';
const MOVED_ALLOWED = 'a percentage above 0, such as "30%" (a price that goes from 100 to 70 or to 130 moved by 30%); false or null turns it off';

/** A field as written: `false`/`null` (off) or its keys, each `null` when turned off and absent when not given. */
export interface RawFieldLimit {
  zeroed?: Limit | null;
  moved?: number | null;
  share?: Limit | null;
}
export type RawChangeLimits = false | Record<string, RawFieldLimit | false>;

/** `"30%"`, `"12.5 %"` → 30, 12.5; null when not a positive percentage. */
export function parsePercent(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const m = /^(\d+(?:\.\d+)?)\s*%$/.exec(value.trim());
  const pct = m ? Number(m[1]) : NaN;
  return pct > 0 && Number.isFinite(pct) ? pct : null;
}

function off(value: unknown): boolean {
  return value === false || value === null;
}

function parseField(value: unknown, add: Add): RawFieldLimit | false {
  if (off(value)) return false;
  if (!isRecord(value)) {
    add([], `${describeValue(value)} is not a field's change limits`, FIELD_ALLOWED);
    return false;
  }
  const out: RawFieldLimit = {};
  for (const key of Object.keys(value)) {
    if (!(FIELD_KEYS as readonly string[]).includes(key)) add([key], `unknown key "${key}" in a field's change limits`, FIELD_KEYS.join(", "));
  }
  for (const key of ["zeroed", "share"] as const) {
    const v = value[key];
    if (v === undefined) continue;
    if (off(v)) out[key] = null;
    else {
      const limit = parseLimit(v);
      if (limit) out[key] = limit;
      else add([key], `${describeValue(v)} is not a limit`, `${LIMIT_ALLOWED}; false or null turns it off`);
    }
  }
  const moved = value.moved;
  if (moved !== undefined) {
    if (off(moved)) out.moved = null;
    else {
      const pct = parsePercent(moved);
      if (pct !== null) out.moved = pct;
      else add(["moved"], `${describeValue(moved)} is not a percentage`, MOVED_ALLOWED);
    }
  }
  return out;
}

export const changeLimitsSchema = z.unknown().transform((value, ctx): RawChangeLimits => {
  const add = issueAdder(ctx);
  if (off(value)) return false;
  if (!isRecord(value)) {
    add([], `${describeValue(value)} is not a set of change limits`, CHANGE_LIMITS_ALLOWED);
    return z.NEVER;
  }
  const out: Record<string, RawFieldLimit | false> = {};
  for (const [field, limits] of Object.entries(value)) {
    out[field] = parseField(limits, (path, message, allowed) => add([field, ...path], message, allowed));
  }
  return out;
});

/**
 * The limits a run applies: the defaults, then what the definition says field
 * by field (a key given replaces the default's, `null` turns it off).
 * `moved` without `share` takes the usual share; `share` without `moved`
 * on a field with no default `moved` has nothing to weigh (changeLimitRules
 * refuses it).
 */
export function normalizeChangeLimits(raw: RawChangeLimits | undefined): ChangeLimits {
  if (raw === false) return {};
  const out: Record<string, FieldChangeLimit> = {};
  // Copies: every automation gets its own, so nothing that edits one reaches the defaults.
  for (const [field, limit] of Object.entries(DEFAULT_CHANGE_LIMITS)) out[field] = structuredClone(limit);
  for (const [field, given] of Object.entries(raw ?? {})) {
    if (given === false) {
      delete out[field];
      continue;
    }
    const base = out[field] ?? {};
    const zeroed = given.zeroed === undefined ? base.zeroed : (given.zeroed ?? undefined);
    const percent = given.moved === undefined ? base.moved?.percent : (given.moved ?? undefined);
    const share = given.share === undefined ? (base.moved?.share ?? { ...DEFAULT_MOVED_SHARE }) : given.share;
    const limit: FieldChangeLimit = {
      ...(zeroed ? { zeroed } : {}),
      ...(percent !== undefined && share ? { moved: { percent, share } } : {}),
    };
    if (limit.zeroed || limit.moved) out[field] = limit;
    else delete out[field];
  }
  return out;
}

/** Cross-field rules of change_limits, on the definition as written (possibly partly invalid). */
export function changeLimitRules(fc: Record<string, unknown>, type: unknown, at: (string | number)[], add: Add): void {
  const limits = fc.change_limits;
  if (limits === undefined) return;
  const here = [...at, "change_limits"];
  if (type !== "products") {
    add(here, `change_limits applies to product imports: an order import has no stock or price of its own to guard, and its records are orders`, "change_limits in a products import");
    return;
  }
  if (!isRecord(limits)) return;
  const identifier = fc.identifier ?? "guid";
  for (const [field, given] of Object.entries(limits)) {
    if (field === identifier) add([...here, field], `"${field}" is the identifier: an update never changes it`, "a mapped field other than the identifier, e.g. stock or price");
    if (!isRecord(given)) continue;
    const hasMoved = given.moved !== undefined && given.moved !== null && given.moved !== false;
    if (given.share !== undefined && !hasMoved && !(field in DEFAULT_CHANGE_LIMITS && DEFAULT_CHANGE_LIMITS[field]?.moved)) {
      add([...here, field, "share"], `share is the share of records that may move by more than "moved", and "${field}" has no moved`, 'moved beside share, e.g. {"moved": "30%", "share": "5%"}');
    }
  }
}
