import { z } from "zod";
import { checkEncoding, LIMIT_ALLOWED, parseLimit } from "./checks.js";
import { actionRulesSchema } from "./schema-actions.js";
import { changeLimitsSchema } from "./change-limits.js";
import { describeValue, flag, wrongValue, integer, isRecord, issueAdder, known, nonEmpty, oneOf, scalar, scalarMap, stringList, text } from "./schema-common.js";
import { EXPORT_FORMATS, IMPORT_FORMATS, type AfterImport, type FieldSource, type Limit } from "./types.js";

/**
 * The shape of one `file_configs[]` entry. Values whose meaning depends on the
 * automation (`create` for products vs orders, import-only keys) are checked in
 * `rules.ts`, which sees the whole definition.
 */

const limit = z.unknown().transform((value, ctx): Limit => {
  const parsed = parseLimit(value);
  if (parsed) return parsed;
  issueAdder(ctx)([], `${describeValue(value)} is not a limit`, LIMIT_ALLOWED);
  return z.NEVER;
});

const AFTER_IMPORT_ALLOWED = 'keep, delete, or "move:<folder>"';
const afterImport = z.unknown().transform((value, ctx): AfterImport => {
  if (value === "keep" || value === "delete") return value;
  const folder = typeof value === "string" ? /^move:(.*)$/s.exec(value)?.[1]?.trim() : isRecord(value) ? value.move : undefined;
  // Whether the folder stays inside the connection's path is path-rules.ts's call, on the literal and again once resolved.
  if (typeof folder === "string" && folder !== "") return { move: folder };
  issueAdder(ctx)([], `${describeValue(value)} is not allowed`, AFTER_IMPORT_ALLOWED);
  return z.NEVER;
});

/** "\t" arrives as a real tab from JSON; `\\t` and `tab` are what people also write for it. */
function oneChar(what: string, example: string) {
  return z.unknown().transform((value, ctx): string => {
    if (value === "\\t" || value === "tab") return "\t";
    if (typeof value === "string" && [...value].length === 1) return value;
    issueAdder(ctx)([], `${describeValue(value)} is not one character`, `one character for the ${what}, e.g. ${example}`);
    return z.NEVER;
  });
}

const FIELD_SOURCE_ALLOWED = 'a column name (or JSONPath/XPath when enabled), or [start, end] character offsets of a fixed-width line, e.g. [0, 12]';
const fieldSource = z.unknown().transform((value, ctx): FieldSource => {
  if (typeof value === "string" && value.trim() !== "") return value;
  if (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === "number" && Number.isInteger(n) && n >= 0)) {
    const [start, end] = value as [number, number];
    if (end > start) return [start, end];
    issueAdder(ctx)([], `[${start}, ${end}] is empty: end must be greater than start (start included, end excluded)`, FIELD_SOURCE_ALLOWED);
    return z.NEVER;
  }
  issueAdder(ctx)([], `${describeValue(value)} is not a field source`, FIELD_SOURCE_ALLOWED);
  return z.NEVER;
});

const encoding = nonEmpty.superRefine((value, ctx) => {
  const wrong = checkEncoding(value);
  if (wrong) issueAdder(ctx)([], wrong, "utf-8, utf-16le, windows-1252, iso-8859-1, … (any encoding iconv-lite knows)");
});

const recordOrTrue = z.union([z.literal(true), z.string()], { error: (iss) => `${describeValue(iss.input)} is not allowed` });

/**
 * The text keys a placeholder may stand for (`"delimiter": "<<delimiter>>"`):
 * checked and normalized by the same schema once the parameters are known.
 */
export const DEFERRED_TEXT_SCHEMAS: Record<string, z.ZodType> = {
  select: oneOf(["latest", "new", "all"]),
  after_import: afterImport,
  delimiter: oneChar("delimiter", '"," ";" "|" or "\\t"'),
  enclosure: oneChar("enclosure (quote)", "'\"'"),
  encoding,
};

export const FILE_CONFIG_KEYS_IMPORT_ONLY = [
  "select",
  "after_import",
  "min_age",
  "require_file",
  "skip_lines",
  "headers",
  "sheet",
  "root",
  "jsonpath",
  "xpath",
  "bulk_file",
  "create",
  "update",
  "remove",
  "remove_limit",
  "error_limit",
  "change_limits",
  "diff_update",
  "diff_fields",
  "diff_tolerance",
  "skip_all",
] as const;

export const fileConfigSchema = known(
  {
    name: nonEmpty.optional(),
    select: oneOf(["latest", "new", "all"]).optional(),
    after_import: afterImport.optional(),
    min_age: integer(0).optional(),
    require_file: flag.optional(),
    format: oneOf([...new Set([...IMPORT_FORMATS, ...EXPORT_FORMATS])] as [string, ...string[]]).optional(),
    delimiter: oneChar("delimiter", '"," ";" "|" or "\\t"').optional(),
    enclosure: oneChar("enclosure (quote)", "'\"'").optional(),
    headers: stringList.min(1).optional(),
    skip_lines: integer(0).optional(),
    encoding: encoding.optional(),
    sheet: z.union([nonEmpty, z.int().min(1)], { error: "expected a sheet name or a 1-based sheet number" }).optional(),
    root: nonEmpty.optional(),
    jsonpath: flag.optional(),
    xpath: flag.optional(),
    bulk_file: flag.optional(),
    field_map: z.record(z.string().min(1), fieldSource, { error: (iss) => (iss.code === "invalid_type" ? wrongValue(iss.input, "is not an object of service field → source") : undefined) }),
    field_run: scalarMap.optional(),
    value_map: z.record(z.string(), z.union([scalar, z.record(z.string(), scalar)], { error: "expected a value, or an object of value → replacement for one field" })).optional(),
    value_map_default: scalarMap.optional(),
    identifier: nonEmpty.optional(),
    search: text.optional(),
    create: recordOrTrue.optional(),
    update: recordOrTrue.optional(),
    remove: recordOrTrue.optional(),
    remove_limit: limit.optional(),
    error_limit: limit.optional(),
    change_limits: changeLimitsSchema.optional(),
    skip_all: flag.optional(),
    diff_update: flag.optional(),
    diff_fields: stringList.optional(),
    diff_tolerance: z.number({ error: "expected a number" }).min(0).optional(),
    vendor_actions: actionRulesSchema.optional(),
    service_actions: actionRulesSchema.optional(),
    payload_multi: flag.optional(),
    lineitem: flag.optional(),
    export_empty: flag.optional(),
    template: nonEmpty.optional(),
  },
  "a file config",
);

export type RawFileConfig = z.output<typeof fileConfigSchema>;
