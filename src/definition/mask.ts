import { isSecretHeader, isSecretKey, MASK } from "../secrets.js";
import { isEncrypted } from "./crypto.js";
import { findPlaceholders } from "./placeholders.js";
import { isRecord } from "./schema-common.js";
import type { Automation } from "./types.js";

/**
 * A copy safe to show (automations.md): `connection.password`, `passphrase`,
 * `oauth.client_secret` and encrypted parameter values become `********`. So do
 * the parameters that feed a secret field (a sample's `<<sftp password>>` is
 * not marked encrypted, yet it is a password), every value under a secret-
 * looking key, and any stored `enc:v1:` value wherever it sits.
 */

function secretValues(a: Automation): Set<string> {
  const c = a.connection;
  const out = new Set<string>();
  for (const v of [c?.password, c?.passphrase, c?.oauth?.client_secret]) if (typeof v === "string" && v !== "") out.add(v);
  for (const [name, v] of Object.entries(c?.headers ?? {})) if (isSecretHeader(name)) out.add(v);
  return out;
}

function maskStrings(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && isSecretKey(key) && typeof value === "string" && value !== "") return MASK;
  if (typeof value === "string") return isEncrypted(value) ? MASK : value;
  if (Array.isArray(value)) return value.map((v) => maskStrings(v, undefined));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = maskStrings(v, k);
  return out;
}

export function maskAutomation(a: Automation): Automation {
  const secrets = secretValues(a);
  // Before resolution a secret field still names its parameters: those are secret too.
  const feeding = new Set<string>();
  for (const v of secrets) for (const ref of findPlaceholders(v)) feeding.add(ref.name);
  const out = maskStrings(a, undefined) as Automation;
  if (out.connection) {
    for (const key of ["password", "passphrase"] as const) if (out.connection[key]) out.connection[key] = MASK;
    if (out.connection.oauth) out.connection.oauth.client_secret = MASK;
    const headers = out.connection.headers;
    if (headers) for (const name of Object.keys(headers)) if (isSecretHeader(name) && headers[name] !== "") headers[name] = MASK;
  }
  out.parameters = a.parameters.map((p) => {
    const value = p.value === null ? null : String(p.value);
    const secret = p.encrypted || feeding.has(p.name) || (value !== null && value.length >= 4 && [...secrets].some((s) => s.includes(value)));
    return secret && p.value !== null && p.value !== "" ? { ...p, value: MASK } : { ...p };
  });
  return out;
}
