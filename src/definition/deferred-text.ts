import { DEFERRED_TEXT_SCHEMAS } from "./schema-file-config.js";
import { PRODUCT_OPERATIONS, SAFE_PRODUCT_OPERATION } from "./rules.js";
import { HTTP_METHODS } from "./schema-connection.js";
import type { Automation } from "./types.js";

/**
 * A text key written as a placeholder, once its parameter is known: checked
 * and normalized as the definition's own value would have been. `value`
 * undefined means "not set" (an operation whose parameter is empty).
 */
export type TextResult = { ok: true; value: unknown } | { ok: false; problem: string };

export function resolveDeferredText(key: string, text: string, type: Automation["type"]): TextResult {
  if (key === "create" || key === "update" || key === "remove") return operation(key, text.trim(), type);
  if (key === "method") {
    const method = text.trim().toUpperCase();
    return (HTTP_METHODS as readonly string[]).includes(method) ? { ok: true, value: method } : { ok: false, problem: `"${text}" is not allowed (allowed: ${HTTP_METHODS.join(", ")})` };
  }
  const schema = DEFERRED_TEXT_SCHEMAS[key];
  if (!schema) return { ok: true, value: text };
  const parsed = schema.safeParse(text);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const allowed = issue && "params" in issue && issue.params && typeof issue.params.allowed === "string" ? ` (allowed: ${issue.params.allowed})` : "";
  return { ok: false, problem: `${issue?.message ?? "not allowed"}${allowed}` };
}

function operation(op: "create" | "update" | "remove", text: string, type: Automation["type"]): TextResult {
  if (text === "" || ["0", "false", "no"].includes(text.toLowerCase())) return { ok: true, value: undefined };
  const yes = ["1", "true", "yes"].includes(text.toLowerCase());
  if (type === "orders") return yes ? { ok: true, value: true } : { ok: false, problem: `orders take ${op}: true, not "${text}"` };
  if (yes) return { ok: true, value: SAFE_PRODUCT_OPERATION[op] };
  const allowed: readonly string[] = PRODUCT_OPERATIONS[op];
  return allowed.includes(text) ? { ok: true, value: text } : { ok: false, problem: `"${text}" is not a product ${op} action (allowed: ${allowed.join(", ")}, or true)` };
}
