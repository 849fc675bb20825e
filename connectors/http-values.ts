import { runInNewContext } from "node:vm";
import { DOMParser } from "@xmldom/xmldom";
import { JSONPath } from "jsonpath-plus";
import { ConveyorError } from "../src/errors.js";
import { isSecretHeader, isSecretKey, isSecretParam, maskSecrets } from "../src/secrets.js";
import type { HttpConnection, HttpTrigger } from "./http-connection.js";
import { runtimeRefs, stringsOf } from "./http-refs.js";
import { parseXPath } from "./http-value-checks.js";

// What a trigger's answer yields: by JSONPath, XPath, a header or the first
// capture group of a regular expression; with none of them, the body itself.

/** A trigger's value is a token, an id or a link: an answer of more is not what was meant. */
export const MAX_VALUE_CHARS = 64 * 1024;
/** A tenant's pattern that backtracks without end must not hold the daemon's one thread. */
export const REGEX_TIMEOUT_MS = 1000;

export interface TriggerAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The JSON of an answer, or a file_format error naming the trigger. */
export function answerJson(answer: TriggerAnswer, where: string): unknown {
  try {
    return JSON.parse(answer.text);
  } catch (err) {
    throw new ConveyorError("file_format", `${where}: the answer is not JSON (${(err as Error).message}): ${maskSecrets(answer.text).slice(0, 200)}`, {
      hint: "use xpath, header or regex for an answer that is not JSON",
    });
  }
}

/** The matches of a JSONPath; filter expressions run in jsonpath-plus's safe evaluator, never as code. */
export function jsonQuery(path: string, json: unknown, where: string): unknown[] {
  try {
    return JSONPath({ path, json: json as object, wrap: true, eval: "safe" }) as unknown[];
  } catch (err) {
    throw new ConveyorError("definition_invalid", `${where} ${path} is not a valid JSONPath: ${(err as Error).message}`, { cause: err });
  }
}

function text(found: unknown): string | undefined {
  if (found === undefined || found === null || found === "") return undefined;
  return typeof found === "object" ? JSON.stringify(found) : String(found as string | number | boolean);
}

function pick(trigger: HttpTrigger, answer: TriggerAnswer, where: string): { value: string | undefined; how: string } {
  if (trigger.jsonpath !== undefined) return { value: text(jsonQuery(trigger.jsonpath, answerJson(answer, where), `${where}.jsonpath`)[0]), how: `jsonpath ${trigger.jsonpath}` };
  if (trigger.xpath !== undefined) {
    const doc = new DOMParser({ onError: () => {} }).parseFromString(answer.text, "text/xml");
    const result = parseXPath(trigger.xpath).evaluate({ node: doc, allowAnyNamespaceForNoPrefix: true });
    const empty = typeof result.toArray === "function" && result.toArray().length === 0;
    return { value: empty ? undefined : text(result.stringValue()), how: `xpath ${trigger.xpath}` };
  }
  if (trigger.header !== undefined) {
    const raw = answer.headers[trigger.header.toLowerCase()];
    return { value: text(Array.isArray(raw) ? raw[0] : raw), how: `header ${trigger.header}` };
  }
  if (trigger.regex !== undefined) return { value: text(regexCapture(trigger.regex, answer.text, where)), how: `regex ${trigger.regex}` };
  return { value: text(answer.text.trim()), how: "the body" };
}

/** The first capture group of `pattern` over `text`, run under a time limit (V8 interrupts a regex at a script timeout). */
function regexCapture(pattern: string, text: string, where: string): unknown {
  try {
    const match = runInNewContext("re.exec(text)", { re: new RegExp(pattern), text }, { timeout: REGEX_TIMEOUT_MS }) as RegExpExecArray | null;
    return match?.[1];
  } catch (err) {
    if ((err as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw err;
    throw new ConveyorError("protocol", `${where}.regex ran longer than ${REGEX_TIMEOUT_MS / 1000} s over the answer and was stopped`, {
      hint: "the pattern backtracks without end on this answer (nested repeats such as (a+)+): anchor it or use jsonpath, xpath or header",
    });
  }
}

/** The value a trigger's answer yields; an answer without one fails the trigger, quoting it. */
export function triggerValue(trigger: HttpTrigger, answer: TriggerAnswer, where: string): string {
  const { value, how } = pick(trigger, answer, where);
  if (value === undefined)
    throw new ConveyorError("protocol", `${where}: ${how} found nothing in the answer (HTTP ${answer.status}): ${maskSecrets(answer.text.replace(/\s+/g, " ")).slice(0, 300)}`, {
      hint: "check the trigger's jsonpath, xpath, header or regex against what the server answers",
    });
  if (value.length > MAX_VALUE_CHARS) throw new ConveyorError("protocol", `${where}: ${how} gave ${value.length} characters; a trigger value is at most ${MAX_VALUE_CHARS}`);
  return value;
}

/** The last step of a JSONPath or the header name: `$.data.access_token` → `access_token`. */
function lastName(path: string): string {
  return /([\w-]+)['"\]]*$/.exec(path)?.[1] ?? "";
}

/**
 * Which triggers' values are secrets (1-based): a value found under a
 * credential-looking name (`$.access_token`, the `X-Auth-Token` header), or
 * one that a later request sends as a credential (in an Authorization-like
 * header, a secret-looking payload key or query parameter). Registered the
 * moment it is found, it is masked in every log line and error after.
 */
export function secretTriggers(conn: HttpConnection): Set<number> {
  const triggers = conn.triggers ?? [];
  const out = new Set<number>();
  triggers.forEach((t, i) => {
    if ((t.header !== undefined && isSecretHeader(t.header)) || (t.jsonpath !== undefined && /token|secret|password|key|auth/i.test(lastName(t.jsonpath)))) out.add(i + 1);
    if (t.xpath !== undefined && isSecretKey(lastName(t.xpath))) out.add(i + 1);
  });
  const mark = (text: string, before: number, secret: boolean): void => {
    if (!secret) return;
    for (const ref of runtimeRefs(text)) if (ref.kind === "trigger") out.add(ref.index === "last" ? before : ref.index);
  };
  const requests = [...triggers.map((t, i) => ({ ...t, before: i })), { address: typeof conn.address === "string" ? conn.address : "", headers: conn.headers, payload: conn.payload, body: undefined, before: triggers.length }];
  for (const r of requests) {
    for (const [name, value] of Object.entries(r.headers ?? {})) mark(value, r.before, isSecretHeader(name));
    stringsOf(r.payload, "payload", (value, _path, key) => mark(value, r.before, key !== undefined && isSecretParam(key)));
    for (const m of r.address.matchAll(/[?&]([^=&#]+)=([^&#]*)/g)) mark(m[2] ?? "", r.before, isSecretParam(decodeURIComponent(m[1] ?? "")));
  }
  return out;
}
