import { connectorSpec } from "../../connectors/index.js";
import { encryptValue, isEncrypted, type Problem } from "../definition/index.js";
import { MASK, maskSecrets } from "../secrets.js";

/**
 * What the daemon does to a definition's raw JSON before it is stored: a
 * masked value sent back unchanged keeps the stored secret (a client that
 * GETs, edits one field and sends it all back must not set a password to
 * `********`), and encrypted parameter values are encrypted at rest.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A parameter's name (or a value shown as text) from a body as sent, which
 * may hold whatever JSON allows. `String()` throws on an object whose
 * `toString` is no function (`{"name": {"toString": 1}}` answered 500), so
 * what is not text, a number or a boolean is named by its JSON.
 */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return value === undefined ? "undefined" : (JSON.stringify(value) ?? "");
}

/** Parameters as an array; published files may key them by name (seed 2.2), which becomes the same array. */
export function parameterList(value: unknown): Json[] {
  if (Array.isArray(value)) return value.filter(isObject);
  if (isObject(value)) return Object.entries(value).flatMap(([name, p]) => (isObject(p) ? [{ name, ...p }] : []));
  return [];
}

/** A value that reads `true`/`1` the way the definition's booleans do. */
export function truthyFlag(value: unknown): boolean {
  return value === true || value === 1 || value === "1" || value === "true";
}

/**
 * A body's flag that `truthyFlag` would read as false without being false:
 * `active: "maybe"` must not switch an automation off, nor `encrypted: "yes"`
 * store a secret in the clear. Absent is fine; the caller keeps the old value.
 */
export function flagProblems(value: unknown, path: string): Problem[] {
  if (value === undefined || value === true || value === false || value === 1 || value === 0) return [];
  if (value === "1" || value === "0" || value === "true" || value === "false") return [];
  return [{ path, message: `${JSON.stringify(value)} is not a boolean`, allowed: "true, false, 1 or 0" }];
}

/** Parameters: masked values take the stored value; encrypted ones are encrypted. */
export function sealParameters(parameters: unknown, previous: unknown, key: Buffer): Json[] {
  const before = new Map(parameterList(previous).map((p) => [textOf(p.name), p]));
  return parameterList(parameters).map((p) => {
    const out = { ...p };
    const old = before.get(textOf(p.name));
    if (out.value === MASK && old) out.value = old.value;
    if (truthyFlag(out.encrypted) && typeof out.value === "string" && out.value !== "" && !isEncrypted(out.value)) {
      out.value = encryptValue(out.value, key);
    }
    return out;
  });
}

/**
 * A value sent back as `********` takes the stored value at the same place.
 * The API masks by key wherever a secret sits (a password, an `Authorization`
 * header, a `token` in a payload or a file config), so every place must
 * round-trip, not only the connection's password.
 */
function keepMasked(value: unknown, previous: unknown): unknown {
  if (value === MASK) return typeof previous === "string" ? previous : value;
  // A URL shown with its credential masked (`?apikey=********`) and sent back unchanged keeps the credential.
  if (typeof value === "string" && value.includes(MASK) && typeof previous === "string" && maskSecrets(previous) === value) return previous;
  if (Array.isArray(value)) return value.map((v, i) => keepMasked(v, Array.isArray(previous) ? previous[i] : undefined));
  if (!isObject(value)) return value;
  const before = isObject(previous) ? previous : {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, keepMasked(v, before[k])]));
}

/** The keys a listing gives every connection (seed 2.2: address, password, path, port, username), empty where unused; the port is the type's listed one. */
export function connectionFiller(type: string): Json {
  return { address: "", password: "", path: "", port: connectorSpec(type)?.listedPort ?? 21, username: "" };
}

/**
 * A listing sent back carries that filler: a stored http connection has no
 * port, yet it is listed with `port: 21`, which an http connection refuses.
 * A filler value the stored connection did not have is dropped again.
 */
function withoutFiller(connection: unknown, previous: unknown): unknown {
  if (!isObject(connection) || !isObject(previous)) return connection;
  const filler = connectionFiller(typeof connection.type === "string" ? connection.type : "");
  return Object.fromEntries(Object.entries(connection).filter(([k, v]) => !(k in filler && filler[k] === v && !(k in previous))));
}

/** A full definition ready to store: secrets kept or sealed against the previous body. */
export function sealDefinition(raw: Json, previous: Json | null, key: Buffer): Json {
  const out = { ...raw };
  if ("parameters" in out) out.parameters = sealParameters(out.parameters, previous?.parameters, key);
  for (const field of ["connection", "file_configs"]) if (field in out) out[field] = keepMasked(out[field], previous?.[field]);
  if (previous && "connection" in out) out.connection = withoutFiller(out.connection, previous.connection);
  return out;
}

/**
 * PATCH (seed: "only supplied fields are updated"): top-level keys replace the
 * stored ones, except `connection`, whose keys are merged one level deep so a
 * patch of `{connection: {path}}` keeps the address and the password.
 */
export function mergePatch(stored: Json, patch: Json): Json {
  const out = { ...stored };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = k === "connection" && isObject(v) && isObject(stored.connection) ? { ...stored.connection, ...v } : v;
  }
  return out;
}

/** Set or add one parameter (PUT …/parameters/{name}). */
export function withParameter(parameters: unknown, name: string, change: { value: unknown; encrypted?: unknown }): Json[] {
  const list = parameterList(parameters);
  const index = list.findIndex((p) => p.name === name);
  const next: Json = { ...(index >= 0 ? list[index] : { name }), value: change.value };
  if (change.encrypted !== undefined) next.encrypted = truthyFlag(change.encrypted);
  return index >= 0 ? list.map((p, i) => (i === index ? next : p)) : [...list, next];
}

/**
 * An installed automation as a run sees it (automations.md): the published
 * configuration with the installer's `active`, schedule and parameter values.
 * Parameters the installer did not set keep the publisher's value.
 */
export function installedDefinition(published: Json, install: Json): Json {
  const values = new Map(parameterList(install.parameters).map((p) => [textOf(p.name), p]));
  const parameters = parameterList(published.parameters).map((p) => {
    const mine = values.get(textOf(p.name));
    if (!mine) return { ...p };
    return { ...p, value: mine.value ?? null, encrypted: truthyFlag(p.encrypted) || truthyFlag(mine.encrypted) };
  });
  return {
    ...published,
    active: install.active ?? published.active,
    ...(typeof install.schedule === "string" ? { schedule: install.schedule } : {}),
    ...(typeof install.timezone === "string" ? { timezone: install.timezone } : {}),
    parameters,
  };
}
