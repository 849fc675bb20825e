import type { z } from "zod";
import type { Problem } from "./types.js";

/** Zod issues and hand-made problems in one form: path, what was wrong, what is allowed. */

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `["file_configs", 0, "field_map", "shipments.tracking"]` → `file_configs[0].field_map["shipments.tracking"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = String(part);
      out += IDENTIFIER.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

function allowedOf(issue: z.core.$ZodIssue): string | undefined {
  if (issue.code === "custom") {
    const allowed = (issue.params as { allowed?: unknown } | undefined)?.allowed;
    return typeof allowed === "string" ? allowed : undefined;
  }
  if (issue.code === "invalid_value") return issue.values.map((v) => String(v)).join(", ");
  if (issue.code === "invalid_type") return issue.expected;
  if (issue.code === "too_small") return issue.origin === "array" ? `at least ${String(issue.minimum)} entries` : issue.origin === "string" ? `at least ${String(issue.minimum)} character${Number(issue.minimum) === 1 ? "" : "s"}` : `≥ ${String(issue.minimum)}`;
  if (issue.code === "too_big") return issue.origin === "string" ? `at most ${String(issue.maximum)} characters` : `≤ ${String(issue.maximum)}`;
  return undefined;
}

function messageOf(issue: z.core.$ZodIssue): string {
  // Zod's default wording ("Invalid input: expected string, received undefined") reads badly for a missing key.
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "required";
  return issue.message;
}

export function problemsFromZod(issues: readonly z.core.$ZodIssue[]): Problem[] {
  return issues.map((issue) => {
    const allowed = allowedOf(issue);
    return { path: formatPath(issue.path), message: messageOf(issue), ...(allowed ? { allowed } : {}) };
  });
}

/** One line per problem: `file_configs[0].create: "begin" is not … (allowed: start, add)`. */
export function describeProblem(p: Problem): string {
  return `${p.path ? `${p.path}: ` : ""}${p.message}${p.allowed ? ` (allowed: ${p.allowed})` : ""}`;
}

/** The seed's validation-failure envelope (v3 part 2.1): `failed` keyed by a string index from "0"; code 1 as in part 7. */
export function failureEnvelope(problems: Problem[]): { results: { failed: Record<string, { message: string; code: number }> } } {
  const failed: Record<string, { message: string; code: number }> = {};
  const list = problems.length > 0 ? problems : [{ path: "", message: "the definition is invalid" }];
  list.forEach((p, i) => {
    failed[String(i)] = { message: describeProblem(p), code: 1 };
  });
  return { results: { failed } };
}
