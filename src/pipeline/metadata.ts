/**
 * An automation's `metadata` (OAuth tokens, the IMAP checkpoint) as a
 * connector sees it: read once per run, written through at once, so a token
 * refreshed mid-run survives a crash of the run. With the secret key, values
 * under a secret key (`access_token`) are stored sealed like a definition's
 * connection secrets, and a clear one an older build left is sealed at the
 * first run that reads it.
 *
 * @module
 */

import type { MetadataStore } from "../../connectors/types.js";
import { decryptValue, encryptValue, isEncrypted } from "../definition/index.js";
import { isSecretKey, registerSecret } from "../secrets.js";
import type { StateStore } from "../state/index.js";

function mapSecrets(value: unknown, key: string | undefined, fn: (text: string) => string): unknown {
  if (typeof value === "string") return key !== undefined && isSecretKey(key) && value !== "" ? fn(value) : value;
  if (Array.isArray(value)) return value.map((v) => mapSecrets(v, undefined, fn));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSecrets(v, k, fn)]));
}

function sealed(metadata: Record<string, unknown>, key: Buffer): Record<string, unknown> {
  return mapSecrets(metadata, undefined, (text) => (isEncrypted(text) ? text : encryptValue(text, key))) as Record<string, unknown>;
}

function opened(metadata: Record<string, unknown>, key: Buffer): Record<string, unknown> {
  return mapSecrets(metadata, undefined, (text) => {
    if (!isEncrypted(text)) return text;
    const plain = decryptValue(text, key);
    registerSecret(plain);
    return plain;
  }) as Record<string, unknown>;
}

export async function metadataStore(store: StateStore, automation: string, secretKey?: Buffer): Promise<MetadataStore> {
  const stored = await store.getMetadata(automation);
  const current = secretKey ? opened(stored, secretKey) : stored;
  const save = async (): Promise<void> => store.setMetadata(automation, secretKey ? sealed(current, secretKey) : current);
  if (secretKey && JSON.stringify(sealed(stored, secretKey)) !== JSON.stringify(stored)) await save();
  return {
    get: (key) => current[key],
    set: async (key, value) => {
      current[key] = value;
      // Only this key, over the stored metadata as it is now: a pointer the API reset during the run is not put back.
      const fresh = await store.getMetadata(automation);
      const written = secretKey ? sealed({ [key]: value }, secretKey)[key] : value;
      await store.setMetadata(automation, { ...fresh, [key]: written });
    },
  };
}
