import { z } from "zod";
import { describeValue, issueAdder, nonEmpty } from "../schema-kit.js";
import type { Scalar } from "./types.js";

// The primitives live in src/schema-kit.ts so that connector specs (below src/definition) build their keys with them.
export { describeValue, flag, integer, isRecord, issueAdder, known, nonEmpty, oneOf, text, wrongValue, type Add } from "../schema-kit.js";

export const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()], {
  error: (iss) => `${describeValue(iss.input)} is not a plain value`,
});
export const scalarMap = z.record(z.string(), scalar) as z.ZodType<Record<string, Scalar>>;

/** A field name or an array of them, normalized to an array. */
export const fieldList = z.unknown().transform((value, ctx): string[] => {
  const list = typeof value === "string" ? [value] : value;
  if (Array.isArray(list) && list.length > 0 && list.every((v) => typeof v === "string" && v !== "")) return list as string[];
  issueAdder(ctx)([], `${describeValue(value)} is not a field name or a list of field names`, 'a field name or an array of field names, e.g. ["title", "brand"]');
  return z.NEVER;
});

export const stringList = z.array(nonEmpty, { error: (iss) => (iss.code === "invalid_type" ? `expected an array of texts, got ${describeValue(iss.input)}` : undefined) });
