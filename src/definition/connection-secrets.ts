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

/** The non-empty secret texts of a connection: its secret fields and credential headers. */
export function connectionSecretValues(conn: unknown): string[] {
  if (!isRecord(conn)) return [];
  const spec = fieldsOf(conn);
  const out: string[] = [];
  for (const field of spec.fields) {
    const v = valueAt(conn, field);
    if (typeof v === "string" && v !== "") out.push(v);
  }
  for (const [name, v] of stringMap(spec.headers ? conn[spec.headers] : undefined)) if (isSecretHeader(name) && typeof v === "string") out.push(v);
  return out;
}

/** Puts `********` over every set secret field and credential header of `conn`, in place. */
export function maskConnectionFields(conn: unknown): void {
  if (!isRecord(conn)) return;
  const spec = fieldsOf(conn);
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
export function registerConnectionSecrets(conn: unknown): void {
  if (!isRecord(conn)) return;
  const spec = fieldsOf(conn);
  for (const field of spec.fields) registerSecret(valueAt(conn, field));
  for (const [name, value] of stringMap(spec.headers ? conn[spec.headers] : undefined)) {
    if (/authorization|token|key|secret/i.test(name) && typeof value === "string") registerSecret(value.replace(/^(Bearer|Basic)\s+/i, ""));
  }
  // URL credentials and secret payload values are known from here on, not only once the http connector opens: a debug file written before is masked too.
  for (const key of spec.urls ?? []) {
    const value = valueAt(conn, key);
    for (const address of [value ?? []].flat()) if (typeof address === "string") registerUrlSecrets(address);
  }
  for (const [name, value] of stringMap(spec.params ? conn[spec.params] : undefined)) if (isSecretParam(name)) registerSecret(value);
}
