import { connectorSpec, type SecretFields } from "../../connectors/index.js";
import { isSecretHeader, isSecretParam, MASK, registerSecret, registerUrlSecrets } from "../secrets.js";
import { isRecord } from "./schema-common.js";

// Where a connection's secrets sit, read from its type's spec: what masking hides and what resolution registers.

const NONE: SecretFields = { fields: [] };

function fieldsOf(conn: unknown): SecretFields {
  return isRecord(conn) ? (connectorSpec(conn.type)?.secrets ?? NONE) : NONE;
}

/** The value at a dot path (`oauth.client_secret`), or undefined. */
function valueAt(conn: Record<string, unknown>, dotted: string): unknown {
  return dotted.split(".").reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), conn);
}

function stringMap(value: unknown): Array<[string, unknown]> {
  return isRecord(value) ? Object.entries(value) : [];
}

/** The blocks of each list the spec names (http `triggers`), with the secret fields of a block. */
function listed(conn: Record<string, unknown>, spec: SecretFields): Array<[Record<string, unknown>, SecretFields]> {
  return Object.entries(spec.lists ?? {}).flatMap(([key, fields]) => {
    const list = conn[key];
    return Array.isArray(list) ? list.filter(isRecord).map((block): [Record<string, unknown>, SecretFields] => [block, fields]) : [];
  });
}

/** The non-empty secret texts of a connection: its secret fields and credential headers, its listed blocks' too. */
export function connectionSecretValues(conn: unknown, spec: SecretFields = fieldsOf(conn)): string[] {
  if (!isRecord(conn)) return [];
  const out: string[] = listed(conn, spec).flatMap(([block, fields]) => connectionSecretValues(block, fields));
  for (const field of spec.fields) {
    const v = valueAt(conn, field);
    if (typeof v === "string" && v !== "") out.push(v);
  }
  for (const [name, v] of stringMap(spec.headers ? conn[spec.headers] : undefined)) if (isSecretHeader(name) && typeof v === "string") out.push(v);
  return out;
}

/** Puts `********` over every set secret field and credential header of `conn` (and of its listed blocks), in place. */
export function maskConnectionFields(conn: unknown, spec: SecretFields = fieldsOf(conn)): void {
  if (!isRecord(conn)) return;
  for (const [block, fields] of listed(conn, spec)) maskConnectionFields(block, fields);
  for (const field of spec.fields) {
    const path = field.split(".");
    const last = path.pop() ?? "";
    const parent = path.length ? valueAt(conn, path.join(".")) : conn;
    // A nested secret (oauth.client_secret) is masked whenever its block is there; a top-level one only when set.
    if (isRecord(parent) && (path.length > 0 || parent[last])) parent[last] = MASK;
  }
  const headers = spec.headers ? conn[spec.headers] : undefined;
  if (isRecord(headers)) for (const name of Object.keys(headers)) if (isSecretHeader(name) && headers[name] !== "") headers[name] = MASK;
}

/**
 * Registers a resolved connection's secrets for masking by value: secret
 * fields, credential headers (without their Bearer/Basic scheme), the
 * credentials URLs carry and the secret-looking request parameters.
 */
export function registerConnectionSecrets(conn: unknown, spec: SecretFields = fieldsOf(conn)): void {
  if (!isRecord(conn)) return;
  for (const [block, fields] of listed(conn, spec)) registerConnectionSecrets(block, fields);
  for (const field of spec.fields) registerSecret(valueAt(conn, field));
  for (const [name, value] of stringMap(spec.headers ? conn[spec.headers] : undefined)) {
    // A run-time placeholder left in it (`Bearer {{trigger_value}}`) is no secret itself: the connector registers the value it stands for.
    if (/authorization|token|key|secret/i.test(name) && typeof value === "string" && !/\{\{/.test(value)) registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ""));
  }
  // URL credentials and secret payload values are known from here on, not only once the http connector opens: a debug file written before is masked too.
  for (const key of spec.urls ?? []) {
    const value = valueAt(conn, key);
    for (const address of [value ?? []].flat()) if (typeof address === "string") registerUrlSecrets(address);
  }
  for (const [name, value] of stringMap(spec.params ? conn[spec.params] : undefined)) if (isSecretParam(name)) registerSecret(value);
}
