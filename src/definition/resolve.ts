import { connectorSpec } from "../../connectors/index.js";
import { ConveyorError } from "../errors.js";
import { registerSecret } from "../secrets.js";
import { registerConnectionSecrets } from "./connection-secrets.js";
import { checkHttpUrl, checkNamePattern, checkSearch, checkTimezone, parseLimit } from "./checks.js";
import { checkCalculate } from "./calculate-syntax.js";
import { capabilityRules } from "./capabilities.js";
import { checkCron } from "./cron.js";
import { decryptValue, isEncrypted } from "./crypto.js";
import { invalidDefinition, isTwigTemplatePath } from "./parse.js";
import { checkTemplateText } from "../template/compile.js";
import { RUN_TOKENS, hasPlaceholder, isRunToken, substitute, tokenValue, type TokenContext } from "./placeholders.js";
import { definitionPathProblems, unsafePathError } from "./path-rules.js";
import { formatPath } from "./problems.js";
import { isRecord } from "./schema-common.js";
import { resolveDeferredText } from "./deferred-text.js";
import { isRuntimePlaceholder } from "./schema-connection.js";
import type { Automation, DeferredField, Problem } from "./types.js";

// Resolution, once per run before anything connects (automations.md):
// parameters into every string, run-time tokens in the automation's time zone,
// `{{field}}` record references inside field_run and setValue left for the
// mapper, and the connector's run-time values (http `{{trigger_value}}`,
// `{{pointer.since}}`) left for the connector. Then the checks that
// placeholders hid at parse time run again on the real values.

export interface ResolveContext {
  runId: string;
  now: Date;
  /** Needed only when a parameter holds an `enc:v1:` value. */
  secretKey?: Buffer;
}

function parameterValues(a: Automation, key: Buffer | undefined): Map<string, string> {
  const values = new Map<string, string>();
  const missing: string[] = [];
  for (const p of a.parameters) {
    let value = p.value === null ? "" : String(p.value);
    if (p.encrypted && isEncrypted(value)) {
      if (!key) throw new ConveyorError("secret_key", `parameter "${p.name}" is encrypted and no secret key was given`, { hint: "set CONVEYOR_SECRET_KEY, or run where <data folder>/secret.key is" });
      value = decryptValue(value, key);
    }
    if (p.encrypted) registerSecret(value);
    if (p.required && value.trim() === "") missing.push(p.name);
    values.set(p.name, value);
  }
  if (missing.length > 0) {
    throw new ConveyorError("parameter_missing", `missing value for required parameter${missing.length === 1 ? "" : "s"}: ${missing.map((n) => `"${n}"`).join(", ")}`, {
      details: { parameters: missing },
      hint: 'give each a value: in the definition, when installing it, or for one run with --param "name=value"',
    });
  }
  return values;
}

type Lookup = (text: string, path: (string | number)[], recordRefs: boolean) => string;

function resolveDeep(value: unknown, path: (string | number)[], recordRefs: boolean, lookup: Lookup): unknown {
  if (typeof value === "string") return lookup(value, path, recordRefs);
  if (Array.isArray(value)) return value.map((v: unknown, i) => resolveDeep(v, [...path, i], recordRefs, lookup));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (path.length === 0 && (k === "parameters" || k === "metadata" || k === "deferred")) {
      out[k] = v;
      continue;
    }
    // Inside field_run and a setValue argument, `{{name}}` may be a field of the record.
    const refs = recordRefs || (path[0] === "file_configs" && path.length === 2 && k === "field_run") || (k === "arg" && value.name === "setValue");
    out[k] = resolveDeep(v, [...path, k], refs, lookup);
  }
  return out;
}

function setAt(target: unknown, path: (string | number)[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!isRecord(node) && !Array.isArray(node)) return;
    const next: unknown = (node as Record<string | number, unknown>)[key];
    if (next === undefined) (node as Record<string | number, unknown>)[key] = {};
    node = (node as Record<string | number, unknown>)[key];
  }
  const last = path[path.length - 1];
  if (last !== undefined && (isRecord(node) || Array.isArray(node))) (node as Record<string | number, unknown>)[last] = value;
}

function deleteAt(target: unknown, path: (string | number)[]): void {
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (isRecord(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[key] : undefined), target);
  const last = path[path.length - 1];
  if (last !== undefined && isRecord(parent)) delete parent[String(last)];
}

function coerce(field: DeferredField, text: string): unknown {
  const t = text.trim();
  if (field.kind === "number") return /^\d+(\.\d+)?$/.test(t) ? Number(t) : undefined;
  if (field.kind === "limit") return parseLimit(t) ?? undefined;
  if (["1", "true", "yes"].includes(t.toLowerCase())) return true;
  return ["0", "false", "no"].includes(t.toLowerCase()) ? false : undefined;
}

/** The checks of `rules.ts` that a placeholder could have hidden, on the resolved values. */
function recheck(a: Automation): Problem[] {
  const problems: Problem[] = [];
  const check = (value: string | undefined, fn: (v: string) => string | null, path: (string | number)[]): void => {
    const wrong = value === undefined ? null : fn(value);
    if (wrong) problems.push({ path: formatPath(path), message: `after resolving parameters: ${wrong}` });
  };
  check(a.schedule, checkCron, ["schedule"]);
  check(a.timezone, checkTimezone, ["timezone"]);
  const conn: Record<string, unknown> = { ...a.connection };
  for (const key of connectorSpec(conn.type)?.urlKeys ?? []) {
    const value = conn[key];
    // Still a placeholder after resolution: a run-time value, known only at request time.
    check(typeof value === "string" && !hasPlaceholder(value) ? value : undefined, checkHttpUrl, ["connection", key]);
  }
  // An after_import given by a parameter is known only now.
  capabilityRules({ ...a }, (path, message) => problems.push({ path: formatPath(path), message: `after resolving parameters: ${message}` }));
  a.file_configs.forEach((fc, i) => {
    if (a.action === "import") check(fc.name, checkNamePattern, ["file_configs", i, "name"]);
    check(fc.template, (t) => checkTemplateText(t, true), ["file_configs", i, "template"]);
    check(fc.search, checkSearch, ["file_configs", i, "search"]);
    for (const list of ["vendor_actions", "service_actions"] as const) {
      fc[list].forEach((rule, r) => {
        check(rule.search, checkSearch, ["file_configs", i, list, r, "search"]);
        for (const fn of rule.functions) {
          if (fn.name !== "calculate") continue;
          for (const [field, expr] of Object.entries(fn.arg)) check(expr, checkCalculate, ["file_configs", i, list, r, "calculate", field]);
        }
      });
    }
  });
  return problems;
}

/** A copy of the automation ready to run: see the module comment. Throws parameter_missing, placeholder_unknown, secret_key or definition_invalid. */
export function resolveAutomation(a: Automation, ctx: ResolveContext): Automation {
  const values = parameterValues(a, ctx.secretKey);
  const timezone = checkTimezone(a.timezone) === null ? a.timezone : "UTC";
  const tokens: TokenContext = { runId: ctx.runId, now: ctx.now, timezone };
  const unknown = new Map<string, string[]>();
  // In a Twig template only `<<name>>` is substituted: its `{{ … }}` is Twig's, even when it spells a parameter's name.
  const lookup: Lookup = (text, path, recordRefs) =>
    substitute(text, (ref) => {
      const value = values.get(ref.name);
      if (value !== undefined) return value;
      if (ref.spelling === "brace" && isRunToken(ref.name)) return tokenValue(ref.name, tokens);
      if (ref.spelling === "brace" && recordRefs) return undefined;
      if (ref.spelling === "brace" && path[0] === "connection" && isRuntimePlaceholder(a.connection?.type, ref.name)) return undefined;
      const where = unknown.get(ref.raw) ?? [];
      where.push(formatPath(path));
      unknown.set(ref.raw, where);
      return undefined;
    }, isTwigTemplatePath(path));
  const resolved = resolveDeep(a, [], false, lookup) as Automation;
  if (unknown.size > 0) {
    const list = [...unknown].map(([raw, paths]) => `${raw} (in ${paths.join(", ")})`);
    throw new ConveyorError("placeholder_unknown", `unknown placeholder${unknown.size === 1 ? "" : "s"}: ${list.join("; ")}`, {
      details: { placeholders: [...unknown.keys()] },
      hint: `define a parameter of that name, or use a run-time token: ${RUN_TOKENS.map((t) => `{{${t}}}`).join(", ")}`,
    });
  }
  const problems: Problem[] = [];
  for (const field of a.deferred ?? []) {
    const text = lookup(field.template, field.path, false);
    if (field.kind === "text") {
      const key = String(field.path[field.path.length - 1] ?? "");
      const result = resolveDeferredText(key, text, resolved.type);
      if (!result.ok) problems.push({ path: formatPath(field.path), message: `${field.template} gave "${text}": ${result.problem}` });
      else if (result.value === undefined) deleteAt(resolved, field.path);
      else setAt(resolved, field.path, result.value);
      continue;
    }
    const value = coerce(field, text);
    if (value === undefined) problems.push({ path: formatPath(field.path), message: `${field.template} gave "${text}", which is not a ${field.kind === "limit" ? "limit" : field.kind}` });
    else setAt(resolved, field.path, value);
  }
  delete resolved.deferred;
  if (resolved.action === "import") {
    resolved.file_configs.forEach((fc, i) => {
      if (!fc.bulk_file && fc.create === undefined && fc.update === undefined && fc.remove === undefined) {
        problems.push({ path: `file_configs[${i}]`, message: "after resolving parameters: an import needs at least one of create, update, remove" });
      }
    });
  }
  problems.push(...recheck(resolved));
  const unsafe = definitionPathProblems({ ...resolved }).map((p) => ({ path: formatPath(p.path), message: `after resolving parameters: ${p.message}`, allowed: p.allowed }));
  // A path that leaves the connection's folder is unsafe_path, as the connector would say, but here before anything connects.
  if (unsafe.length > 0) throw unsafePathError(`automation "${a.name}"`, [...unsafe, ...problems]);
  if (problems.length > 0) throw invalidDefinition(`automation "${a.name}"`, problems);
  registerConnectionSecrets(resolved.connection);
  return resolved;
}
