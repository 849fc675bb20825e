import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { registerSecret } from "../secrets.js";
import { makePrivateDir } from "../state/private-files.js";

/**
 * Encryption at rest of encrypted parameter values (automations.md): AES-256-GCM
 * with a random 96-bit IV per value. The stored form is versioned,
 * `enc:v1:` + base64(iv | tag | ciphertext), so a later key or cipher change can
 * read old values. GCM's tag makes a tampered value or a wrong key fail loudly
 * instead of decrypting to garbage.
 */

const PREFIX = "enc:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_FILE = "secret.key";

function keyFromText(text: string, where: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, "hex");
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, "base64") : Buffer.alloc(0);
  if (decoded.length === 32) return decoded;
  throw new ConveyorError("secret_key", `${where} is not a 256-bit key`, {
    hint: "use 64 hex characters or the base64 of 32 bytes, e.g. the output of `openssl rand -hex 32`",
  });
}

/**
 * The key for encrypted parameters: `CONVEYOR_SECRET_KEY` (settings.secretKey),
 * or `<dataDir>/secret.key`, generated once with mode 0600. Losing that file
 * makes stored encrypted values unreadable, so it is never regenerated.
 */
export function loadSecretKey(settings: Pick<Settings, "secretKey" | "dataDir">): Buffer {
  if (settings.secretKey) {
    const key = keyFromText(settings.secretKey, "the secret_key setting (CONVEYOR_SECRET_KEY)");
    registerSecret(key.toString("hex"));
    return key;
  }
  const file = path.join(settings.dataDir, KEY_FILE);
  makePrivateDir(settings.dataDir);
  try {
    // `wx`: two processes starting at once must not each write a different key.
    writeFileSync(file, `${randomBytes(32).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new ConveyorError("secret_key", `cannot create the key file ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  // Someone widened the mode by hand (or a umask-less copy did): narrow it again.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const key = keyFromText(readFileSync(file, "utf8"), `the key file ${file}`);
  registerSecret(key.toString("hex"));
  return key;
}

export function isEncrypted(value: unknown): boolean {
  return typeof value === "string" && value.startsWith(PREFIX);
}

export function encryptValue(plain: string, key: Buffer): string {
  if (key.length !== 32) throw new ConveyorError("secret_key", "the encryption key must be 32 bytes");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
}

export function decryptValue(stored: string, key: Buffer): string {
  if (!isEncrypted(stored)) throw new ConveyorError("secret_key", "the value is not an encrypted value (expected the enc:v1: prefix)");
  const raw = Buffer.from(stored.slice(PREFIX.length), "base64");
  if (raw.length < IV_BYTES + TAG_BYTES) throw new ConveyorError("secret_key", "the encrypted value is truncated");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch (err) {
    throw new ConveyorError("secret_key", "cannot decrypt an encrypted parameter: it was encrypted with another key, or it was altered", {
      cause: err,
      hint: "use the secret_key (CONVEYOR_SECRET_KEY or <data folder>/secret.key) the value was stored with, or enter the parameter's value again",
    });
  }
}
