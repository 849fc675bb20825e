import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAutomation } from "../../src/definition/index.js";
import { productImport } from "../definition/helpers.js";
import { REAL_KEYS } from "./fuzz-inputs.js";

/**
 * Names a tenant writes as keys (an action function, a connection key) are
 * looked up in tables of the definition rules; a name of Object's prototype
 * (valueOf, toString, constructor, __proto__) once found the method there:
 * the parser threw (a 500 on the API, an aborted `conveyor check`) or stored
 * the method as if it were a rule. The fuzz of the parser found both.
 */
const NAMES = ["valueOf", "toString", "constructor", "hasOwnProperty", "isPrototypeOf", "__proto__"];

describe("a key named after an Object method is an unknown key, never a rule", () => {
  it.each(NAMES)("vendor_actions function %s: refused as an unknown action function", (name) => {
    const def = productImport();
    const rule = JSON.parse(`{${JSON.stringify(name)}: ["title"]}`) as Record<string, unknown>;
    const configs = def.file_configs as Array<Record<string, unknown>>;
    const result = parseAutomation({ ...def, file_configs: [{ ...configs[0], vendor_actions: [rule] }] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.map((p) => p.message).join("; ")).toMatch(new RegExp(`unknown action function "${name}"|the key "${name}" is refused`));
  });

  it.each(NAMES.filter((n) => n !== "__proto__"))("connection key %s: a problem at its path, not a throw", (name) => {
    const def = productImport();
    const result = parseAutomation({ ...def, connection: { ...(def.connection as Record<string, unknown>), [name]: "x" } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.some((p) => p.path.includes("connection"))).toBe(true);
  });
});

/** Every path in a sample definition that holds a scalar, with whether it is a string. */
function leafPaths(value: unknown, at: (string | number)[] = []): Array<{ at: (string | number)[]; text: boolean }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...at, i]));
  if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...at, k]));
  return [{ at, text: typeof value === "string" }];
}

/** An object whose own keys shadow the conversions String() and template literals call: converting it throws. */
const UNPRINTABLE = JSON.parse('{"toString": false, "valueOf": false}') as unknown;

function withValue(root: unknown, at: (string | number)[], value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(root)) as Record<string | number, unknown>;
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[at[at.length - 1] as string | number] = value;
  return copy;
}

describe("a value named after an Object method is a value, never a table entry", () => {
  // The fuzz found `"action": "toString"` reaching a table of what each direction needs from its connection,
  // and `"format": {"toString": false}` throwing inside String() while a problem was worded.
  const samples = readdirSync(path.join(import.meta.dirname, "..", "..", "samples"))
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f, JSON.parse(readFileSync(path.join(import.meta.dirname, "..", "..", "samples", f), "utf8")) as unknown] as const);

  it.each(samples)("%s: every field set to each name, or to an unprintable object, parses to an automation or to problems", (_file, sample) => {
    const leaves = leafPaths(sample);
    expect(leaves.filter((l) => l.text).length).toBeGreaterThan(3);
    for (const { at, text } of leaves) {
      for (const name of [...(text ? NAMES : []), UNPRINTABLE]) {
        const raw = withValue(sample, at, name);
        let result: ReturnType<typeof parseAutomation> | undefined;
        expect(() => (result = parseAutomation(raw)), `${at.join(".")} = ${JSON.stringify(name)}`).not.toThrow();
        if (result && !result.ok) for (const p of result.problems) expect(p.message.length).toBeGreaterThan(0);
      }
    }
  });
});

describe("any key the definition reads, given an unprintable object, is a problem at its path", () => {
  // Keys no sample holds are worded by other rules; each is tried at the top, in the connection and in a file config.
  const sample = productImport();
  const places: Array<(string | number)[]> = [[], ["connection"], ["file_configs", 0]];
  it.each(places.map((p) => [p.join(".") || "top level", p] as const))("%s", (_name, place) => {
    for (const key of REAL_KEYS) {
      const raw = withValue(sample, [...place, key], UNPRINTABLE);
      let result: ReturnType<typeof parseAutomation> | undefined;
      expect(() => (result = parseAutomation(raw)), `${[...place, key].join(".")}`).not.toThrow();
      if (result && !result.ok) expect(result.problems.length).toBeGreaterThan(0);
    }
  });
});
