import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decryptValue, encryptValue, isEncrypted, loadSecretKey } from "../../src/definition/index.js";
import { ConveyorError } from "../../src/errors.js";

/** Encryption at rest of encrypted parameters: AES-256-GCM, key from the settings or a 0600 key file. */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "conveyor-key-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function thrown(fn: () => unknown): ConveyorError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConveyorError) return err;
    throw err;
  }
  throw new Error("expected an error");
}

describe("encryptValue / decryptValue", () => {
  const key = Buffer.alloc(32, 1);

  it("round-trips, with a fresh IV each time", () => {
    for (const plain of ["", "p@ss wörd ✓", "x".repeat(10_000)]) {
      const a = encryptValue(plain, key);
      const b = encryptValue(plain, key);
      expect(a).toMatch(/^enc:v1:[A-Za-z0-9+/]+=*$/);
      expect(a).not.toBe(b);
      expect(isEncrypted(a)).toBe(true);
      expect(decryptValue(a, key)).toBe(plain);
    }
    expect(isEncrypted("plain")).toBe(false);
    expect(isEncrypted(null)).toBe(false);
  });

  it("detects a tampered value", () => {
    const stored = encryptValue("secret-value", key);
    const raw = Buffer.from(stored.slice("enc:v1:".length), "base64");
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    const err = thrown(() => decryptValue(`enc:v1:${raw.toString("base64")}`, key));
    expect(err.code).toBe("secret_key");
    expect(err.message).toMatch(/another key, or it was altered/);
  });

  it("says so clearly for a wrong key, without the value", () => {
    const stored = encryptValue("secret-value", key);
    const err = thrown(() => decryptValue(stored, Buffer.alloc(32, 2)));
    expect(err.code).toBe("secret_key");
    expect(err.hint).toMatch(/secret_key|CONVEYOR_SECRET_KEY/);
    expect(JSON.stringify(err.toJSON())).not.toContain("secret-value");
  });

  it("refuses a truncated or unprefixed value", () => {
    expect(thrown(() => decryptValue("enc:v1:AAAA", key)).message).toMatch(/truncated/);
    expect(thrown(() => decryptValue("hello", key)).message).toMatch(/enc:v1:/);
  });
});

describe("loadSecretKey", () => {
  it("generates the key file once, mode 0600, and reads it back", () => {
    const dataDir = path.join(tempDir(), "data");
    const first = loadSecretKey({ dataDir, secretKey: undefined });
    const file = path.join(dataDir, "secret.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first).toHaveLength(32);
    expect(readFileSync(file, "utf8").trim()).toBe(first.toString("hex"));
    expect(loadSecretKey({ dataDir, secretKey: undefined }).equals(first)).toBe(true);
  });

  it("narrows a key file someone made readable by others", () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, "secret.key");
    writeFileSync(file, "ab".repeat(32));
    chmodSync(file, 0o644);
    expect(loadSecretKey({ dataDir, secretKey: undefined }).toString("hex")).toBe("ab".repeat(32));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("takes the setting as 64 hex characters or base64 of 32 bytes", () => {
    const dataDir = tempDir();
    const bytes = Buffer.alloc(32, 5);
    expect(loadSecretKey({ dataDir, secretKey: bytes.toString("hex") }).equals(bytes)).toBe(true);
    expect(loadSecretKey({ dataDir, secretKey: bytes.toString("base64") }).equals(bytes)).toBe(true);
    const err = thrown(() => loadSecretKey({ dataDir, secretKey: "too-short" }));
    expect(err.code).toBe("secret_key");
    expect(err.message).toMatch(/CONVEYOR_SECRET_KEY/);
  });
});
