import { ConveyorError } from "../src/errors.js";
import { POINTERS_KEY, storedPointers } from "../src/pointers/values.js";
import type { HttpConnection } from "./http-connection.js";
import type { MetadataStore } from "./types.js";

// The run-time placeholders of an http connection: `{{trigger_value}}` (the
// last trigger's value), `{{trigger_valueN}}` (1-based) and `{{pointer.NAME}}`
// (a cursor kept in the automation's metadata). Parameters are long resolved
// when these are filled, request by request.

/** A placeholder name the connector fills itself; the definition layer leaves these as written. */
export const RUNTIME_PLACEHOLDER = /^(?:trigger_value\d*|pointer\.[A-Za-z_][A-Za-z0-9_]*)$/;

// A pointer's name as src/pointers/rules.ts allows it (POINTER_NAME).
const REF = /\{\{\s*(trigger_value(\d*)|pointer\.([A-Za-z_][A-Za-z0-9_]*))\s*\}\}/g;

export type RuntimeRef = { kind: "trigger"; index: number | "last"; raw: string } | { kind: "pointer"; name: string; raw: string };

/** The run-time references of a text, in order. */
export function runtimeRefs(text: string): RuntimeRef[] {
  return [...text.matchAll(REF)].map((m) => {
    const raw = m[0];
    if (m[3] !== undefined) return { kind: "pointer", name: m[3], raw };
    return { kind: "trigger", index: m[2] ? Number(m[2]) : "last", raw };
  });
}

/** Every string of a JSON-like value, with its dotted key path. */
export function stringsOf(value: unknown, path: string, visit: (text: string, path: string, key: string | undefined) => void, key?: string): void {
  if (typeof value === "string") visit(value, path, key);
  else if (Array.isArray(value)) value.forEach((v: unknown, i) => stringsOf(v, `${path}[${i}]`, visit));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) stringsOf(v, `${path}.${k}`, visit, k);
}

/**
 * The values the run-time placeholders stand for in one run: the trigger
 * values found so far, and the pointers as the metadata holds them (a
 * pointer's `initial` until it has a value of its own).
 */
export class RequestValues {
  readonly found: string[] = [];

  constructor(
    private readonly conn: HttpConnection,
    private readonly metadata: MetadataStore,
  ) {}

  private pointer(name: string): string {
    const value = storedPointers({ [POINTERS_KEY]: this.metadata.get(POINTERS_KEY) })[name] ?? this.conn.pointers?.[name]?.initial;
    if (value !== undefined) return value;
    throw new ConveyorError("definition_invalid", `{{pointer.${name}}}: the pointer "${name}" has no value yet and connection.pointers.${name}.initial is not set`, {
      details: { pointer: name },
      hint: `give connection.pointers.${name} an initial value (e.g. "1970-01-01T00:00:00Z"), the value the first run starts from`,
    });
  }

  private value(ref: RuntimeRef): string {
    if (ref.kind === "pointer") return this.pointer(ref.name);
    const i = ref.index === "last" ? this.found.length : ref.index;
    const value = this.found[i - 1];
    if (value === undefined)
      throw new ConveyorError("definition_invalid", `${ref.raw} is used before trigger ${i < 1 ? "1" : String(i)} ran (${this.found.length} trigger value${this.found.length === 1 ? "" : "s"} so far)`, {
        hint: "a trigger can use the values of the triggers before it; the final request can use them all",
      });
    return value;
  }

  /** A header or payload text: each placeholder is replaced by its value as it is. */
  fill(text: string): string {
    return runtimeRefs(text).length === 0 ? text : text.replace(REF, (raw) => this.value(runtimeRefs(raw)[0] ?? { kind: "trigger", index: "last", raw }));
  }

  /**
   * An address: a placeholder that starts it goes in as it is (it may be a
   * whole URL, a download link a trigger found); anywhere else its value is
   * percent-encoded, so a timestamp or an id cannot break the path or query.
   */
  fillAddress(text: string): string {
    return text.replace(REF, (raw: string, _name: string, _n: string, _p: string, offset: number) => {
      const value = this.value(runtimeRefs(raw)[0] ?? { kind: "trigger", index: "last", raw });
      return text.slice(0, offset).trim() === "" ? value : encodeURIComponent(value);
    });
  }

  /** A payload: every string in it filled. */
  fillDeep(value: unknown): unknown {
    if (typeof value === "string") return this.fill(value);
    if (Array.isArray(value)) return value.map((v: unknown) => this.fillDeep(v));
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.fillDeep(v)]));
    return value;
  }
}

/** Whether an address starts with a trigger value: then the answer chose the host, and credentials need a known one. */
export function addressFromValue(address: string): boolean {
  const first = runtimeRefs(address)[0];
  return first !== undefined && first.kind === "trigger" && address.trimStart().startsWith(first.raw);
}
