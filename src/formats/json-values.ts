import { JSONPath } from "jsonpath-plus";
import { ConveyorError } from "../errors.js";

/**
 * A JSON value as field text. Numbers arrive as their source text (the parser never turns them
 * into floats), so `12345678901234567890` and `1.10` survive. null is an empty field; an array
 * of scalars is joined with ","; other arrays and objects are kept as JSON.
 */
export function jsonText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== "object")) {
    return value.map((v) => (v === null ? "" : String(v))).join(",");
  }
  return JSON.stringify(value);
}

/**
 * `root` of a JSON file config, in the child form a stream can follow: `$`, `$.data.items`,
 * `$['data']['items']`, `$.pages[0].items`, optionally ending in `[*]`. Recursive descent and
 * filters cannot be decided before the records go by, so they are refused.
 */
export function parseRoot(root: string): Array<string | number> {
  let rest = root.trim();
  if (rest.startsWith("$")) rest = rest.slice(1);
  const parts: Array<string | number> = [];
  const token = /^(?:\.([A-Za-z_$][\w$-]*)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*(\d+)\s*\]|\[\s*\*\s*\]|^([A-Za-z_$][\w$-]*))/;
  while (rest.length) {
    const m = token.exec(rest);
    if (!m) {
      throw new ConveyorError("definition_invalid", `root ${JSON.stringify(root)} is not a JSONPath a stream can follow`, {
        details: { field: "root" },
        hint: "Use the child form: $.data.items, $['data']['items'] or $.pages[0].items (no .., no filters).",
      });
    }
    const name = m[1] ?? m[2] ?? m[3] ?? m[5];
    if (name !== undefined) parts.push(name);
    else if (m[4] !== undefined) parts.push(Number(m[4]));
    else if (rest.length !== m[0].length) {
      throw new ConveyorError("definition_invalid", `root ${JSON.stringify(root)}: [*] may only end the path`, {
        details: { field: "root" },
      });
    }
    rest = rest.slice(m[0].length);
  }
  return parts;
}

/** A field_map JSONPath relative to one record; the first match counts. */
export function compileJsonPath(path: string): (record: unknown) => string | undefined {
  try {
    JSONPath.toPathArray(path);
  } catch (err) {
    throw new ConveyorError("definition_invalid", `field_map value ${JSON.stringify(path)} is not a valid JSONPath`, { cause: err });
  }
  return (record) => {
    if (record === null || typeof record !== "object") return undefined;
    const found: unknown = JSONPath({ path, json: record, wrap: true });
    return Array.isArray(found) ? jsonText(found[0]) : undefined;
  };
}
