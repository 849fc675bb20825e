/**
 * The process-wide set of secret values. Every password, token and encrypted
 * parameter is registered here the moment it is read, and every text that
 * leaves the process (log lines, error messages, debug files, API bodies,
 * notifications) passes through `maskSecrets`. Masking by value catches the
 * secret wherever it ends up, not only under the keys we thought of.
 */
export const MASK = "********";

/** Keys whose values are secret wherever they appear. */
export const SECRET_KEYS = new Set([
  "password",
  "pass",
  "passphrase",
  "token",
  "api_token",
  "apitoken",
  "api_key",
  "apikey",
  "x-api-key",
  "secret",
  "client_secret",
  "secret_key",
  "authorization",
  "x-auth-token",
  "access_token",
  "refresh_token",
  "private_key",
]);

const secrets = new Set<string>();
// Secrets shorter than this would mask ordinary words ("1", "abc").
const MIN_SECRET_LENGTH = 4;
let pattern: RegExp | null = null;

export function registerSecret(value: unknown): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH || value === MASK) return;
  if (secrets.has(value)) return;
  secrets.add(value);
  // Also the forms a secret takes on the wire.
  const encoded = encodeURIComponent(value);
  if (encoded !== value) secrets.add(encoded);
  secrets.add(Buffer.from(value).toString("base64"));
  pattern = null;
}

/**
 * The registered values in every form, for a worker thread: threads share no
 * memory, so a thread that writes texts masks with the set it was handed.
 * The count tells whether the set has grown since it was handed over.
 */
export function secretValues(): string[] {
  return [...secrets];
}

export function secretCount(): number {
  return secrets.size;
}

/** In a worker thread: adopt the values `secretValues` gave, as they are. */
export function adoptSecretValues(values: readonly string[]): void {
  for (const v of values) secrets.add(v);
  pattern = null;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Past this length a value is masked by a plain search: one alternation of long values outgrows what V8 compiles. */
const PATTERN_LENGTH = 512;
let long: string[] = [];

function currentPattern(): RegExp | null {
  if (secrets.size === 0) return null;
  if (!pattern) {
    // Longest first so a secret containing another is masked whole.
    const sorted = [...secrets].sort((a, b) => b.length - a.length);
    long = sorted.filter((v) => v.length > PATTERN_LENGTH);
    const parts = sorted.filter((v) => v.length <= PATTERN_LENGTH).map(escape);
    try {
      pattern = new RegExp(parts.length > 0 ? parts.join("|") : "(?!)", "g");
    } catch {
      // Too many values for one expression: every one is searched for plainly (slower, never wrong).
      long = sorted;
      pattern = /(?!)/g;
    }
  }
  return pattern;
}

export function maskSecrets(text: string): string {
  const re = currentPattern();
  if (!re) return text;
  let out = text;
  for (const value of long) if (out.includes(value)) out = out.split(value).join(MASK);
  return out.replace(re, MASK);
}

/** Whether `text` holds a registered secret: a test that builds no string, for the hot paths that mask only what needs it. */
export function hasSecret(text: string): boolean {
  // A search per secret: V8 looks for a plain string with a skip table, an alternation of them one character at a time,
  // which on a large page of a plan costs far more than the plain searches.
  for (const secret of secrets) if (text.includes(secret)) return true;
  return false;
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase());
}

// Names suppliers give a credential in a feed URL (`?apikey=`, `?key=`, a presigned `X-Amz-Signature`).
// Whole names only: a value registered by mistake (`?sortkey=price`) would mask "price" in every message.
const SECRET_PARAM = /^(x-amz-(signature|credential|security-token)|(api|access|private|secret|auth|app|client)?[-_]?key|sig|signature|pwd|passwd|auth|sessionid|session_id)$/i;

/** Whether an HTTP header of this name carries a credential (`Authorization`, `X-Api-Key`, `Cookie`). */
export function isSecretHeader(name: string): boolean {
  return isSecretKey(name) || /auth|key|token|secret|cookie|signature/i.test(name);
}

/** Whether a URL query parameter of this name carries a credential. */
export function isSecretParam(name: string): boolean {
  return isSecretKey(name) || SECRET_PARAM.test(name);
}

/**
 * Registers the credentials a URL carries (its userinfo password, its secret
 * query values) so that every text masks them, even a server's echo of the URL.
 */
export function registerUrlSecrets(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return;
  }
  if (url.password) registerSecret(decodeURIComponent(url.password));
  for (const [key, value] of url.searchParams) if (isSecretParam(key)) registerSecret(value);
}

/** A deep copy with secret keys and registered secret values masked. */
export function maskDeep<T>(value: T): T {
  return maskValue(value, undefined) as T;
}

function maskValue(value: unknown, key: string | undefined): unknown {
  if (key !== undefined && isSecretKey(key) && value !== null && value !== undefined && value !== "") return MASK;
  if (typeof value === "string") return maskSecrets(value);
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { type: value.name, message: maskSecrets(value.message), ...(code === undefined ? {} : { code }) };
  }
  if (Array.isArray(value)) return value.map((v) => maskValue(v, undefined));
  if (value && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskValue(v, k);
    return out;
  }
  return value;
}

/** For tests: forget every registered secret. */
export function clearSecretsForTests(): void {
  secrets.clear();
  pattern = null;
}
