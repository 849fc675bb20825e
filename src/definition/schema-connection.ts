import { z } from "zod";
import { connectorSpecs, connectorSpec, type ConnectorSpec, type RuleKit } from "../../connectors/index.js";
import { checkHttpUrl } from "./checks.js";
import { hasPlaceholder } from "./placeholders.js";
import { known, oneOf, type Add } from "./schema-common.js";
import type { Connection } from "./types.js";

// The `connection` block, checked against the registered connector specs: which keys a type reads, which it requires, its defaults.

export { HTTP_METHODS } from "../../connectors/http-spec.js";

/** Every registered type's keys in one loose object: a key of another type is refused by `connectionRules`, naming the type. */
function buildSchema(specs: readonly ConnectorSpec[]) {
  const types = specs.map((s) => s.type);
  const shape: Record<string, z.ZodType> = { type: oneOf(types as [string, ...string[]]) };
  for (const spec of specs) for (const [key, schema] of Object.entries(spec.keys)) shape[key] ??= schema.optional();
  return known(shape, "connection");
}

let built: { specs: readonly ConnectorSpec[]; schema: ReturnType<typeof buildSchema> } | null = null;

/** Rebuilt when a type is registered, so a test's fake type is checked like a built-in one. */
function currentSchema(): ReturnType<typeof buildSchema> {
  const specs = connectorSpecs();
  const same = built !== null && built.specs.length === specs.length && built.specs.every((s, i) => s === specs[i]);
  if (!same || !built) built = { specs, schema: buildSchema(specs) };
  return built.schema;
}

export const connectionSchema = z.lazy(() => currentSchema());

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

/** Whether `{{name}}` in a connection of `type` is one its connector fills at request time (http: `trigger_value`, `pointer.since`). */
export function isRuntimePlaceholder(type: unknown, name: string): boolean {
  return connectorSpec(type)?.runtimePlaceholders?.test(name) ?? false;
}

/** The types that read `key`, in registry order. */
function typesReading(key: string): string[] {
  return connectorSpecs()
    .filter((s) => Object.hasOwn(s.keys, key))
    .map((s) => s.type);
}

function keyRules(spec: ConnectorSpec, conn: Record<string, unknown>, action: unknown, add: Add): void {
  const t = spec.type;
  for (const [key, value] of Object.entries(conn)) {
    if (key === "type" || isEmpty(value) || typesReading(key).length === 0) continue;
    // Own keys only: a key named toString or constructor must not find Object's method.
    if (!Object.hasOwn(spec.keys, key)) {
      add(["connection", key], `"${key}" does not apply to a ${t} connection`, `keys of ${t}: ${["type", ...Object.keys(spec.keys)].join(", ")}`);
    } else if (action === "export" && spec.importOnly?.includes(key)) {
      add(["connection", key], `"${key}" applies to imports only`);
    } else if (action === "import" && spec.exportOnly?.includes(key)) {
      add(["connection", key], `"${key}" applies to ${spec.label} exports only`);
    }
  }
}

/** Rules that need the connection type and the automation's action together. */
export function connectionRules(conn: Record<string, unknown>, action: unknown, add: Add): void {
  const spec = connectorSpec(conn.type);
  if (!spec) return;
  keyRules(spec, conn, action, add);
  const kit: RuleKit = {
    need: (key, why) => {
      if (isEmpty(conn[key])) add(["connection", key], `required for ${why}`);
    },
    add,
    plain: (value): value is string => typeof value === "string" && !hasPlaceholder(value),
  };
  spec.rules?.(conn, action, kit);
  for (const key of spec.urlKeys ?? []) {
    const value = conn[key];
    if (kit.plain(value)) {
      const wrong = checkHttpUrl(value);
      if (wrong) add(["connection", key], wrong, "an http:// or https:// URL");
    }
  }
  if (Array.isArray(conn.address) && !(spec.addressList !== undefined && action === spec.addressList)) {
    add(["connection", "address"], "a list of addresses is only for e-mail export recipients", "one host name or URL");
  }
  for (const s of connectorSpecs()) {
    for (const [key, format] of Object.entries(s.formats ?? {})) {
      const value = conn[key];
      if (kit.plain(value) && !format.pattern.test(value)) add(["connection", key], format.message, format.allowed);
    }
  }
}

type DeferrableKind = "number" | "boolean" | "text";

/**
 * The connection keys that may be a whole placeholder, by block (`""` for the
 * connection itself, `email_search` for a nested one): the type's own first,
 * in its spec's order, then every other type's, so a key written on the wrong
 * type is taken out and resolved as before rather than failing its shape.
 */
export function deferrableConnectionKeys(type: unknown): Map<string, Record<string, DeferrableKind>> {
  const own = connectorSpec(type);
  const blocks = new Map<string, Record<string, DeferrableKind>>([["", {}]]);
  for (const spec of [...(own ? [own] : []), ...connectorSpecs().filter((s) => s !== own)]) {
    for (const [dotted, kind] of Object.entries(spec.deferrable ?? {})) {
      const dot = dotted.indexOf(".");
      const [block, key] = dot < 0 ? ["", dotted] : [dotted.slice(0, dot), dotted.slice(dot + 1)];
      const kinds = blocks.get(block) ?? {};
      kinds[key] ??= kind;
      blocks.set(block, kinds);
    }
  }
  return blocks;
}

/** The spec's per-type defaults; only keys the type reads are set. */
export function normalizeConnection(conn: Record<string, unknown>, action: "import" | "export"): Connection {
  const spec = connectorSpec(conn.type);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(conn)) if (!isEmpty(value) && (key === "type" || typesReading(key).length > 0)) out[key] = value;
  spec?.defaults?.(out, action);
  return out as unknown as Connection;
}
