import { isSecretKey, MASK } from "../secrets.js";
import { connectionSecretValues, maskConnectionFields } from "./connection-secrets.js";
import { isEncrypted } from "./crypto.js";
import { findPlaceholders } from "./placeholders.js";
import { isRecord } from "./schema-common.js";
import type { Automation } from "./types.js";

// A copy safe to show (automations.md): the connection's secret fields (its
// spec's: `password`, `passphrase`, `oauth.client_secret`…) and encrypted
// parameter values become `********`. So do the parameters that feed a secret
// field (a sample's `<<sftp password>>` is not marked encrypted, yet it is a
// password), every value under a secret-looking key, and any stored `enc:v1:`
// value wherever it sits.

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
  const secrets = new Set(connectionSecretValues(a.connection));
  // Before resolution a secret field still names its parameters: those are secret too.
  const feeding = new Set<string>();
  for (const v of secrets) for (const ref of findPlaceholders(v)) feeding.add(ref.name);
  const out = maskStrings(a, undefined) as Automation;
  maskConnectionFields(out.connection);
  out.parameters = a.parameters.map((p) => {
    const value = p.value === null ? null : String(p.value);
    const secret = p.encrypted || feeding.has(p.name) || (value !== null && value.length >= 4 && [...secrets].some((s) => s.includes(value)));
    return secret && p.value !== null && p.value !== "" ? { ...p, value: MASK } : { ...p };
  });
  return out;
}
