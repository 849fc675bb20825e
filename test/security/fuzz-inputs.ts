import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";

/**
 * Generators shared by the fuzz tests of issue #24: JSON a hostile or careless
 * client could send, biased towards the keys and values the definition and
 * the API bodies really read, so the generated inputs get past the first type
 * check and reach the deeper rules.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Keys a user names that must never reach an object's prototype. */
export const PROTOTYPE_KEYS = ["__proto__", "constructor", "prototype"] as const;

/** Every key of the definition (automations.md, src/definition/schema*.ts) and of the API bodies. */
export const REAL_KEYS = [
  "name", "vendor", "description", "slug", "active", "draft", "schedule", "events", "timezone", "type", "action", "connection", "file_configs",
  "parameters", "metadata", "address", "username", "password", "path", "port", "ssl_ftp", "implicit_tls", "use_pasv_address",
  "is_key_file", "passphrase", "host_key", "validate", "method", "headers", "payload", "login_address", "oauth", "paginate",
  "pagination", "folder", "email_search", "subject", "body", "select", "after_import", "min_age", "require_file", "format",
  "delimiter", "enclosure", "skip_lines", "encoding", "sheet", "root", "jsonpath", "xpath", "bulk_file", "field_map", "field_run",
  "value_map", "value_map_default", "identifier", "search", "create", "update", "remove", "remove_limit", "error_limit", "change_limits", "zeroed", "moved", "share", "skip_all",
  "diff_update", "diff_fields", "diff_tolerance", "vendor_actions", "service_actions", "payload_multi", "lineitem", "export_empty",
  "value", "encrypted", "label", "required", "hidden_from_user", "shared_id", "setValue", "remapField", "calculate", "replace",
  "prefix", "suffix", "truncate", "skip", "ignoreValue", "ignoreField", "trim", "uppercase", "lowercase", "next", "records",
  "since_days", "from", "client_id", "client_secret", "grant_type", "sku", "guid", "id", "title", "stock", "price", "oid", "order",
  "channel", "status", "header", "data", "url", "event_types", "enabled", "start", "context", "integration", "instance", "request_id",
  "timestamp_start", "timestamp_end", "channel_id", "operation", "result", "job_id", "lines", "oids",
] as const;

/** Strings that have broken parsers before: placeholders, paths, regexes, control and wide characters, formulas. */
const NASTY_STRINGS = [
  "", " ", "0", "1", "-1", "true", "null", "NaN", "1e309", "<<", ">>", "<<>>", "<<api key>>", "<<missing>>", "{{DATE}}", "{{sku}}",
  "{{", "}}", "{{constructor}}", "<<__proto__>>", "../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini", "move:..", "move:../x",
  "move:/abs", "delete", "keep", "\u0000", "\r\n", "\u202e", "😀", "\ud800", "/(a+)+$/", "/[/", "/x/gimsuyd", "round(cost * 1.35 + 2, 2)",
  "((((((", "cost / 0", "stock:<1", "title:~", "sku:=\"a\" AND", "(", "0 3 * * *", "61 * * * *", "* * * * * * *", "@hourly",
  "Europe/Berlin", "Mars/Olympus", "utf-8", "x-unknown", "\\t", "tab", "http://127.0.0.1:1/", "https://[::1]/", "ftp://x",
  "javascript:alert(1)", "latest", "all", "new", "add", "edit", "start", "30%", "150%", "-5", "10", "SHA256:", "$.data[*]", "//item",
  "=HYPERLINK(\"x\")", "__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf",
];

const NASTY_NUMBERS = [0, -0, 1, -1, 0.5, 21, 22, 65535, 65536, 1e21, 1e308, -1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, Number.MIN_SAFE_INTEGER, 5e-324];

export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS, ...REAL_KEYS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("<<", "{{"), fc.string({ maxLength: 12 }), fc.constantFrom(">>", "}}", "")).map((p) => p.join("")) },
  // Long values: names, messages and search texts are echoed back, so their length must not matter.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("a", "é", "%", "<<x>>", "/"), fc.integer({ min: 256, max: 20_000 })).map(([s, n]) => s.repeat(n)) },
);

const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...NASTY_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

export const oddKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...REAL_KEYS) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
  { weight: 2, arbitrary: oddString },
);

export const leaf: fc.Arbitrary<Json> = fc.oneof(oddString, oddNumber, fc.boolean(), fc.constant(null));

/** Any JSON value up to `depth` levels, with real, odd and prototype keys. */
export function junk(depth = 6): fc.Arbitrary<Json> {
  const { tree } = fc.letrec<{ tree: Json; node: Json }>((tie) => ({
    tree: fc.oneof({ depthSize: "small", withCrossShrink: true, maxDepth: depth }, leaf, tie("node")),
    node: fc.oneof(fc.array(tie("tree"), { maxLength: 5 }), fc.dictionary(oddKey, tie("tree"), { maxKeys: 6 })),
  }));
  return tree;
}

export interface Deep {
  levels: number;
  shape: "object" | "array" | "mixed";
  key: string;
}

/**
 * How to nest a value thousands deep, as objects, arrays or both: what a
 * stack-bound recursive walk cannot survive. The value itself is built by
 * `nestText` inside the property, so fast-check never has to print or shrink it.
 */
export const deep: fc.Arbitrary<Deep> = fc.record({
  levels: fc.integer({ min: 1_000, max: 12_000 }),
  shape: fc.constantFrom("object", "array", "mixed"),
  // Repeated at every level: a 20,000-character key thousands deep would be a string past V8's limit, built by the test itself.
  key: oddKey.filter((key) => key.length <= 64),
});

/** The JSON text of the nested value, built as text: JSON.stringify itself runs out of stack on it. */
export function nestText(d: Deep, bottom = '"bottom"'): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < d.levels; i++) {
    const array = d.shape === "array" || (d.shape === "mixed" && i % 2 === 1);
    open.push(array ? "[" : `{${JSON.stringify(d.key)}:`);
    close.push(array ? "]" : "}");
  }
  return `${open.join("")}${bottom}${close.reverse().join("")}`;
}

/** The sample definitions shipped with Conveyor: valid starting points the mutations break one field at a time. */
export const SAMPLES: Record<string, Json>[] = (() => {
  const dir = path.join(import.meta.dirname, "..", "..", "samples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Record<string, Json>);
})();

type Step = string | number;

function pathsOf(value: Json, at: Step[] = [], out: Step[][] = []): Step[][] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

interface Mutation {
  pick: number;
  kind: "replace" | "delete" | "add";
  key: string;
  value: Json;
}

/** Sets, removes or adds at one place; own properties only, so `__proto__` becomes a key as JSON.parse makes it. */
function mutate(root: Json, mutation: Mutation): Json {
  // A copy through JSON: the generated value stays untouched for shrinking, and `__proto__` keys become own keys as on the wire.
  const m = { ...mutation, value: JSON.parse(JSON.stringify(mutation.value)) as Json };
  const paths = pathsOf(root);
  const at = paths[m.pick % paths.length] ?? [];
  if (at.length === 0) return m.kind === "replace" ? m.value : root;
  const parentPath = at.slice(0, -1);
  let parent: Json = root;
  for (const step of parentPath) parent = (parent as Record<Step, Json>)[step] as Json;
  const last = at[at.length - 1] as Step;
  if (Array.isArray(parent)) {
    if (m.kind === "delete") parent.splice(Number(last), 1);
    else if (m.kind === "add") parent.push(m.value);
    else parent[Number(last)] = m.value;
  } else if (parent !== null && typeof parent === "object") {
    if (m.kind === "delete") delete parent[String(last)];
    else Object.defineProperty(parent, m.kind === "add" ? m.key : String(last), { value: m.value, enumerable: true, writable: true, configurable: true });
  }
  return root;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom("replace", "delete", "add"),
  key: oddKey,
  value: junk(4),
});

/** A sample definition with a few fields replaced, removed or added; sometimes left valid on purpose. */
export const definition: fc.Arbitrary<Json> = fc
  .tuple(fc.constantFrom(...SAMPLES), fc.array(mutation, { maxLength: 4 }))
  .map(([sample, mutations]) => mutations.reduce<Json>((d, m) => mutate(d, m), structuredClone(sample)));

/** What arrives at a JSON edge: a mutated definition, arbitrary JSON, or any top-level value. */
export const definitionLike: fc.Arbitrary<Json> = fc.oneof({ weight: 5, arbitrary: definition }, { weight: 2, arbitrary: junk(8) }, { weight: 1, arbitrary: leaf });

/** An object whose values are mostly of the right kind for `keys`, with odd values and odd keys mixed in. */
export function bodyOf(keys: readonly string[], good: fc.Arbitrary<Json> = leaf): fc.Arbitrary<Json> {
  const value = fc.oneof({ weight: 2, arbitrary: good }, { weight: 1, arbitrary: junk(3) });
  const known = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length });
  return fc.oneof(
    { weight: 6, arbitrary: known },
    { weight: 2, arbitrary: fc.tuple(known, fc.dictionary(oddKey, junk(3), { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...a })) },
    { weight: 1, arbitrary: junk(4) },
  );
}

/** Tally of one fuzz: inputs sent and what broke, printed in the test output for the closing note. */
export class FuzzTally {
  inputs = 0;
  readonly failures: string[] = [];

  constructor(readonly name: string) {}

  fail(what: string, input: unknown): void {
    const text = JSON.stringify(input) ?? String(input);
    this.failures.push(`${what} <- ${text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text}`);
  }

  report(): string {
    const line = `fuzz ${this.name}: ${this.inputs} generated inputs, ${this.failures.length} failures`;
    return this.failures.length === 0 ? line : `${line}\n  ${this.failures.slice(0, 10).join("\n  ")}`;
  }
}
