import { z } from "zod";
import { issueAdder, known, nonEmpty, oneOf, text, wrongValue, type Add } from "../src/schema-kit.js";
import type { RuleKit } from "./spec.js";
import { runtimeRefs, stringsOf } from "./http-refs.js";
import { regexProblem, xpathProblem } from "./http-value-checks.js";

// The keys of http `triggers`, and the rules and warnings over
// them that need the whole connection: which trigger values a request may use.

const SELECTORS = ["jsonpath", "xpath", "header", "regex"] as const;

function number(min: number, max: number, what: string) {
  return z.unknown().transform((value, ctx): number => {
    if (typeof value === "number" && Number.isFinite(value) && value >= min && value <= max) return value;
    issueAdder(ctx)([], wrongValue(value, `is not ${what} from ${min} to ${max}`), `${what} from ${min} to ${max} (fractions allowed)`);
    return z.NEVER;
  });
}

const scalar = z.union([text, z.number(), z.boolean()], { error: "expected a text, number or boolean" });

export const pollSchema = known(
  {
    until: nonEmpty,
    equals: scalar.optional(),
    fail_on: z.array(scalar).optional(),
    interval: number(0.01, 3600, "seconds").optional(),
    backoff: number(1, 10, "a factor").optional(),
    deadline: number(0.01, 86_400, "seconds").optional(),
  },
  "a trigger's poll",
);

/** One trigger; `headers` and `payload` take the connection's own schemas. */
export function triggerSchema(headers: z.ZodType, methods: readonly [string, ...string[]]) {
  return known(
    {
      method: z
        .string()
        .transform((m) => m.toUpperCase())
        .pipe(oneOf(methods))
        .optional(),
      address: nonEmpty,
      headers: headers.optional(),
      payload: z.record(z.string(), z.unknown()).optional(),
      body: text.optional(),
      jsonpath: nonEmpty.optional(),
      xpath: nonEmpty.optional(),
      header: nonEmpty.optional(),
      regex: nonEmpty.optional(),
      poll: pollSchema.optional(),
    },
    "a trigger",
  );
}

type Conn = Readonly<Record<string, unknown>>;
type Trigger = Record<string, unknown>;

function triggersOf(conn: Conn): Trigger[] {
  return Array.isArray(conn.triggers) ? conn.triggers.filter((t): t is Trigger => !!t && typeof t === "object" && !Array.isArray(t)) : [];
}

/** The strings of a request where run-time values are filled: address, headers, payload, body. */
function requestStrings(request: Record<string, unknown>, at: (string | number)[], visit: (text: string, path: (string | number)[]) => void): void {
  for (const key of ["address", "headers", "payload", "body"]) stringsOf(request[key], key, (value, dotted) => visit(value, [...at, ...dotted.split(".")]));
}

/** Which trigger (1-based) each `{{trigger_value…}}` of a request before which `before` triggers ran names. */
function namedTriggers(text: string, before: number): number[] {
  return runtimeRefs(text).flatMap((r) => (r.kind === "trigger" ? [r.index === "last" ? before : r.index] : []));
}

function isPlainUrl(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? null : `"${value}" is not an http(s) URL`;
  } catch {
    return `"${value}" is not a URL`;
  }
}

/** What one trigger may hold: one value selector, a payload or a body, patterns that compile. */
function triggerRules(t: Trigger, at: (string | number)[], kit: RuleKit): void {
  const selectors = SELECTORS.filter((k) => t[k] !== undefined);
  if (selectors.length > 1) kit.add(at, `has ${selectors.join(" and ")}: a trigger's value comes from one of them`, SELECTORS.join(", "));
  if (t.payload !== undefined && t.body !== undefined) kit.add([...at, "body"], "a trigger sends a payload (JSON, or a query for GET) or a body as written, not both", "payload or body");
  if (kit.plain(t.address) && !runtimeRefs(t.address).length) {
    const wrong = isPlainUrl(t.address);
    if (wrong) kit.add([...at, "address"], wrong, "an http:// or https:// URL");
  }
  if (kit.plain(t.regex)) {
    const wrong = regexProblem(t.regex);
    if (wrong) kit.add([...at, "regex"], wrong, "a regular expression with one capture group, e.g. token=(\\w+)");
  }
  if (kit.plain(t.xpath)) {
    const wrong = xpathProblem(t.xpath);
    if (wrong) kit.add([...at, "xpath"], wrong, "an XPath 1.0 expression, e.g. /response/id");
  }
  if (typeof t.jsonpath === "string" && !t.jsonpath.startsWith("$")) kit.add([...at, "jsonpath"], "a JSONPath starts with $", "e.g. $.id or $.data.download_url");
  const poll = t.poll as Record<string, unknown> | undefined;
  if (typeof poll?.until === "string" && !poll.until.startsWith("$")) kit.add([...at, "poll", "until"], "a JSONPath starts with $", 'e.g. $.status with equals: "done"');
}

/**
 * The rules of `triggers`: each trigger's own, then the values each request
 * uses: a trigger only those of the triggers before it, the final request
 * any; run-time placeholders only where they are filled.
 */
export function triggerConnectionRules(conn: Conn, kit: RuleKit): void {
  const triggers = triggersOf(conn);
  const check = (text: string, path: (string | number)[], before: number): void => {
    for (const n of namedTriggers(text, before))
      if (n < 1 || n > before) kit.add(path, `uses the value of trigger ${Math.max(n, 1)}, but ${before === 0 ? "no trigger runs" : `only ${before} trigger${before === 1 ? "" : "s"} run`} before this request`, before === 0 ? "a trigger first (connection.triggers)" : `{{trigger_value}}, {{trigger_value1}}…{{trigger_value${before}}}`);
  };
  triggers.forEach((t, i) => {
    triggerRules(t, ["connection", "triggers", i], kit);
    requestStrings(t, ["connection", "triggers", i], (text, path) => check(text, path, i));
  });
  requestStrings(conn, ["connection"], (text, path) => check(text, path, triggers.length));
  // Anywhere else a run-time placeholder would be sent as written.
  for (const [key, value] of Object.entries(conn)) {
    if (["address", "headers", "payload", "triggers"].includes(key)) continue;
    stringsOf(value, key, (text, dotted) => {
      if (runtimeRefs(text).length) kit.add(["connection", ...dotted.split(".")], "run-time values ({{trigger_value…}}, {{pointer.…}}) are filled in addresses, headers, payloads and bodies only", "a parameter (<<name>>) here");
    });
  }
}

/** `conveyor check`: a trigger whose value no later request uses. */
export function triggerWarnings(conn: Conn, add: Add): void {
  const triggers = triggersOf(conn);
  const used = new Set<number>();
  triggers.forEach((t, i) => requestStrings(t, [], (text) => namedTriggers(text, i).forEach((n) => used.add(n))));
  requestStrings(conn, [], (text) => namedTriggers(text, triggers.length).forEach((n) => used.add(n)));
  triggers.forEach((_t, i) => {
    if (used.has(i + 1)) return;
    add(["connection", "triggers", i], `the value of trigger ${i + 1} ({{trigger_value${i + 1}}}) is never used by a later trigger or the final request`, `{{trigger_value${i + 1}}} (or {{trigger_value}} in the request right after it) in an address, header, payload or body; a trigger sent only for its effect can ignore this`);
  });
}
