import { decryptValue, encryptValue, findPlaceholders, isEncrypted } from "../definition/index.js";
import { isSecretHeader, isSecretKey, MASK, registerSecret, registerUrlSecrets } from "../secrets.js";
import { textOf } from "./definition-body.js";

/**
 * Connection secrets at rest: what the API masks as secret is stored sealed
 * with the secret key (`enc:v1:`, definition/crypto.ts), not only the
 * parameters marked `encrypted`. That is every non-empty string under a
 * secret key (password, passphrase, private_key, client_secret, token…) in
 * the connection and the file configs, every secret header, every URL that
 * carries credentials, and the value of every parameter that feeds one of
 * those (a sample's `<<sftp password>>`). The stored form is opened again
 * before validation and before a run; the API masks the opened form as before.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A URL with a userinfo password or a credential in its query. */
function urlHasCredentials(text: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return false;
  try {
    const url = new URL(text);
    return url.password !== "" || [...url.searchParams.keys()].some((k) => isSecretKey(k) || /key|token|secret|signature|pass/i.test(k));
  } catch {
    return false;
  }
}

/** Only `<<name>>` placeholders (and spaces): the secret is the parameter's value, sealed there. */
function onlyPlaceholders(text: string): boolean {
  const refs = findPlaceholders(text);
  return refs.length > 0 && refs.reduce((rest, ref) => rest.replace(ref.raw, ""), text).trim() === "";
}

/** Visits every string in a secret position: under a secret key, a secret header, or a URL with credentials. */
function eachSecret(value: unknown, key: string | undefined, inHeaders: boolean, visit: (text: string) => string): unknown {
  if (typeof value === "string") {
    const secret = key !== undefined && (isSecretKey(key) || (inHeaders && isSecretHeader(key)));
    return (secret || urlHasCredentials(value)) && value !== "" && value !== MASK ? visit(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => eachSecret(v, undefined, false, visit));
  if (!isObject(value)) return value;
  const headers = key !== undefined && key.toLowerCase() === "headers";
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, eachSecret(v, k, headers, visit)]));
}

const SECRET_PARTS = ["connection", "file_configs"] as const;

/** Names of the parameters whose values feed a secret position of this (opened) definition. */
export function feedingParameters(raw: Json): Set<string> {
  const names = new Set<string>();
  for (const part of SECRET_PARTS) {
    eachSecret(raw[part], part, false, (text) => {
      for (const ref of findPlaceholders(text)) names.add(ref.name);
      return text;
    });
  }
  return names;
}

/** Every string, wherever it sits: a sealed URL no longer looks like one, so opening cannot go by position. */
function eachString(value: unknown, visit: (text: string) => string): unknown {
  if (typeof value === "string") return visit(value);
  if (Array.isArray(value)) return value.map((v) => eachString(v, visit));
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, eachString(v, visit)]));
}

function openText(text: string, key: Buffer): string {
  if (!isEncrypted(text)) return text;
  const plain = decryptValue(text, key);
  // A URL's host and path are not secret: masking the whole of it would hide where a run connects.
  if (urlHasCredentials(plain)) registerUrlSecrets(plain);
  else registerSecret(plain);
  return plain;
}

function sealText(text: string, key: Buffer): string {
  return isEncrypted(text) || onlyPlaceholders(text) ? text : encryptValue(text, key);
}

/** Parameters as an array or keyed by name (seed 2.2), kept in the shape they came in. */
function mapParameters(parameters: unknown, fn: (p: Json, name: string) => Json): unknown {
  if (Array.isArray(parameters)) return parameters.map((p: unknown) => (isObject(p) ? fn(p, textOf(p.name)) : p));
  if (isObject(parameters)) return Object.fromEntries(Object.entries(parameters).map(([name, p]) => [name, isObject(p) ? fn(p, name) : p]));
  return parameters;
}

/**
 * Every `enc:v1:` value of a stored body in clear: the connection's, the
 * file configs' and the parameters'. A value the key cannot open fails with
 * the `secret_key` error, naming the key to use.
 */
export function openSecrets(body: Json, key: Buffer): Json {
  const out = { ...body };
  for (const part of SECRET_PARTS) if (part in out) out[part] = eachString(out[part], (text) => openText(text, key));
  if ("parameters" in out) {
    out.parameters = mapParameters(out.parameters, (p) => (typeof p.value === "string" && isEncrypted(p.value) ? { ...p, value: openText(p.value, key) } : p));
  }
  return out;
}

/**
 * A body ready to store with every secret sealed. `feeding` adds parameter
 * names whose values are secret though this body does not show why (an
 * installed automation: the published connection names them). Sealing is
 * idempotent: a sealed value stays as it is.
 */
export function sealSecrets(body: Json, key: Buffer, feeding: ReadonlySet<string> = new Set()): Json {
  const names = new Set([...feeding, ...feedingParameters(openSecrets(body, key))]);
  const out = { ...body };
  for (const part of SECRET_PARTS) if (part in out) out[part] = eachSecret(out[part], part, false, (text) => sealText(text, key));
  if ("parameters" in out) {
    out.parameters = mapParameters(out.parameters, (p, name) =>
      names.has(name) && typeof p.value === "string" && p.value !== "" && p.value !== MASK && !isEncrypted(p.value) ? { ...p, value: encryptValue(p.value, key) } : p,
    );
  }
  return out;
}
