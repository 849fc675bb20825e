import { describe, expect, it } from "vitest";
import { parseAutomation } from "../../src/definition/index.js";
import { productImport } from "../definition/helpers.js";

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
