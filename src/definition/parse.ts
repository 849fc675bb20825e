import { readFile, stat } from "node:fs/promises";
import { ConveyorError } from "../errors.js";
import { depthMessage, jsonDepth, MAX_JSON_DEPTH } from "../json-limits.js";
import { MAX_DEFINITION_BYTES, structureProblems } from "./limits.js";
import { normalizeAutomation } from "./normalize.js";
import { findPlaceholders, isRunToken, isWholePlaceholder, RUN_TOKENS } from "./placeholders.js";
import { describeProblem, formatPath, problemsFromZod } from "./problems.js";
import { isRecord } from "./schema-common.js";
import { automationSchema } from "./schema.js";
import { deferrableConnectionKeys, isRuntimePlaceholder } from "./schema-connection.js";
import type { Automation, DeferredField, Problem } from "./types.js";

/**
 * Number and boolean keys that may be written as a placeholder
 * (`"port": "<<sftp port>>"`): the test servers of the samples, and installers
 * of shared automations, pick ports and switches at run time. A connection's
 * keys are its type's spec's `deferrable`.
 */
const DEFERRABLE: Record<string, Record<string, DeferredField["kind"]>> = {
  top: { active: "boolean", draft: "boolean" },
  file_config: {
    min_age: "number",
    require_file: "boolean",
    skip_lines: "number",
    jsonpath: "boolean",
    xpath: "boolean",
    bulk_file: "boolean",
    skip_all: "boolean",
    diff_update: "boolean",
    diff_tolerance: "number",
    payload_multi: "boolean",
    lineitem: "boolean",
    export_empty: "boolean",
    remove_limit: "limit",
    error_limit: "limit",
    select: "text",
    after_import: "text",
    delimiter: "text",
    enclosure: "text",
    encoding: "text",
    create: "text",
    update: "text",
    remove: "text",
  },
};

function takeDeferred(obj: Record<string, unknown>, kinds: Record<string, DeferredField["kind"]>, at: (string | number)[], out: DeferredField[]): void {
  for (const [key, kind] of Object.entries(kinds)) {
    const value = obj[key];
    if (typeof value !== "string" || !isWholePlaceholder(value)) continue;
    out.push({ path: [...at, key], template: value, kind });
    // `active` is required, and an import needs one operation: keep the key so the checks pass; resolution sets the real value.
    if (key === "active" || key === "create" || key === "update" || key === "remove") obj[key] = true;
    else delete obj[key];
  }
}

function extractDeferred(raw: Record<string, unknown>): { copy: Record<string, unknown>; deferred: DeferredField[] } {
  const copy = structuredClone(raw);
  const deferred: DeferredField[] = [];
  takeDeferred(copy, DEFERRABLE.top ?? {}, [], deferred);
  if (isRecord(copy.connection)) {
    // The service lists every connection key for every type, empty where unused (seed 2.2, "as listed").
    for (const [key, value] of Object.entries(copy.connection)) if (value === "" || value === null) delete copy.connection[key];
    // Which connection keys may be a placeholder is each connection type's own declaration (its spec's `deferrable`).
    for (const [block, kinds] of deferrableConnectionKeys(copy.connection.type)) {
      const target = block === "" ? copy.connection : copy.connection[block];
      if (isRecord(target)) takeDeferred(target, kinds, block === "" ? ["connection"] : ["connection", block], deferred);
    }
  }
  if (Array.isArray(copy.file_configs)) {
    copy.file_configs.forEach((fc: unknown, i) => {
      if (isRecord(fc)) takeDeferred(fc, DEFERRABLE.file_config ?? {}, ["file_configs", i], deferred);
    });
  }
  return { copy, deferred };
}

export function parameterNames(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.flatMap((p: unknown) => (isRecord(p) && typeof p.name === "string" ? [p.name] : []));
  return isRecord(raw) ? Object.keys(raw) : [];
}

/** `{{field}}` of the current record is allowed in field_run values and setValue values only. */
/** `file_configs[i].template`: its `{{ }}` are Twig's own, never placeholders; only `<<parameter>>` is substituted there. */
export function isTwigTemplatePath(path: readonly (string | number)[]): boolean {
  return path.length === 3 && path[0] === "file_configs" && path[2] === "template";
}

export function isRecordTemplatePath(path: readonly (string | number)[]): boolean {
  if (path[0] !== "file_configs") return false;
  if (path[2] === "field_run" && path.length === 4) return true;
  return (path[2] === "vendor_actions" || path[2] === "service_actions") && path[4] === "setValue" && path.length === 6;
}

/** Calls `visit` for every string value of the definition, with its path; parameters and metadata are data, not configuration. */
export function walkStrings(value: unknown, path: (string | number)[], visit: (text: string, path: (string | number)[]) => void): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value)) value.forEach((v: unknown, i) => walkStrings(v, [...path, i], visit));
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (path.length === 0 && (k === "parameters" || k === "metadata")) continue;
      walkStrings(v, [...path, k], visit);
    }
  }
}

function placeholderProblems(raw: Record<string, unknown>): Problem[] {
  const names = new Set(parameterNames(raw.parameters));
  const problems: Problem[] = [];
  const allowed = `parameters: ${names.size ? [...names].join(", ") : "(none defined)"}; run-time tokens: ${RUN_TOKENS.map((t) => `{{${t}}}`).join(", ")}`;
  const type = isRecord(raw.connection) ? raw.connection.type : undefined;
  walkStrings(raw, [], (text, path) => {
    // Each unknown placeholder once per string, and at most a few: a string of thousands of them under a long key
    // made one problem each, every one carrying the key, and their text outgrew what a string can hold.
    const unknown = new Map<string, string>();
    for (const ref of findPlaceholders(text, isTwigTemplatePath(path))) {
      if (names.has(ref.name)) continue;
      if (ref.spelling === "brace" && (isRunToken(ref.name) || isRecordTemplatePath(path))) continue;
      // Filled by the connector at request time; its spec's rules say where they may stand.
      if (ref.spelling === "brace" && path[0] === "connection" && isRuntimePlaceholder(type, ref.name)) continue;
      unknown.set(ref.raw, `${ref.raw} names no parameter${ref.spelling === "brace" ? " and no run-time token" : ""}`);
    }
    if (unknown.size === 0) return;
    const at = formatPath(path);
    const listed = [...unknown.values()];
    for (const message of listed.slice(0, PLACEHOLDER_PROBLEMS)) problems.push({ path: at, message, allowed });
    if (listed.length > PLACEHOLDER_PROBLEMS) problems.push({ path: at, message: `and ${listed.length - PLACEHOLDER_PROBLEMS} more placeholders that name no parameter`, allowed });
  });
  return problems;
}

/** Unknown placeholders reported one by one per string; the rest are counted in one more problem. */
const PLACEHOLDER_PROBLEMS = 5;

/** Validates and normalizes a definition; every problem is reported, each with its field path. */
export function parseAutomation(raw: unknown): { ok: true; automation: Automation } | { ok: false; problems: Problem[] } {
  if (!isRecord(raw)) return { ok: false, problems: [{ path: "", message: "a definition is a JSON object", allowed: "{name, active, schedule, type, action, connection, file_configs, …}" }] };
  const limits = structureProblems(raw);
  if (limits.length > 0) return { ok: false, problems: limits };
  const { copy, deferred } = extractDeferred(raw);
  const result = automationSchema.safeParse(copy);
  const problems = [...(result.success ? [] : problemsFromZod(result.error.issues)), ...placeholderProblems(raw)];
  if (!result.success || problems.length > 0) return { ok: false, problems };
  const automation = normalizeAutomation(result.data);
  if (deferred.length > 0) automation.deferred = deferred;
  return { ok: true, automation };
}

export function invalidDefinition(where: string, problems: Problem[]): ConveyorError {
  const lines = problems.map((p) => `  ${describeProblem(p)}`).join("\n");
  return new ConveyorError("definition_invalid", `${where}: ${problems.length} problem${problems.length === 1 ? "" : "s"} in the definition:\n${lines}`, {
    details: { problems },
    hint: "fix the fields named above; `conveyor check <file>` lists the same problems",
  });
}

function jsonSyntaxError(file: string, text: string, err: Error): ConveyorError {
  const at = /position (\d+)/.exec(err.message);
  const explicit = /line (\d+) column (\d+)/.exec(err.message);
  let line = explicit ? Number(explicit[1]) : undefined;
  let column = explicit ? Number(explicit[2]) : undefined;
  if (!explicit && at) {
    const before = text.slice(0, Number(at[1]));
    line = before.split("\n").length;
    column = before.length - before.lastIndexOf("\n");
  }
  const where = line !== undefined ? `line ${line}, column ${column}` : "unknown position";
  return new ConveyorError("definition_invalid", `${file}: not valid JSON at ${where}: ${err.message.replace(/ in JSON at position \d+.*$/, "")}`, {
    details: { file, line, column, problems: [{ path: "", message: `not valid JSON at ${where}` }] },
    hint: "a trailing comma, a missing quote or a comment are the usual causes",
  });
}

/** Reads, validates and normalizes a definition file; throws with ALL problems. */
export async function loadAutomationFile(file: string): Promise<Automation> {
  let text: string;
  let size: number;
  try {
    size = (await stat(file)).size;
    // A file past the limit is not read at all: its size is the whole answer.
    text = size > MAX_DEFINITION_BYTES ? "" : await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConveyorError(code === "ENOENT" ? "definition_not_found" : "definition_invalid", `cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (size > MAX_DEFINITION_BYTES) throw invalidDefinition(file, [{ path: "", message: `the file is ${size} bytes; a definition is at most ${MAX_DEFINITION_BYTES} bytes (${MAX_DEFINITION_BYTES / (1024 * 1024)} MB)`, allowed: "a smaller definition: split a large value_map" }]);
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) throw invalidDefinition(file, [{ path: "", message: depthMessage("the file", depth), allowed: `at most ${MAX_JSON_DEPTH} levels of objects and arrays` }]);
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    throw jsonSyntaxError(file, text.replace(/^\uFEFF/, ""), err as Error);
  }
  const result = parseAutomation(raw);
  if (!result.ok) throw invalidDefinition(file, result.problems);
  return result.automation;
}
