import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { ConveyorError } from "../../src/errors.js";
import { isSecretHeader, isSecretParam, maskDeep, maskSecrets, registerSecret, registerUrlSecrets, MASK } from "../../src/secrets.js";
import { withRetry } from "../../src/retry.js";

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join("") };
}

describe("secrets", () => {
  it("masks secret keys and registered values, deep", () => {
    registerSecret("hunter2-very-secret");
    const out = maskDeep({ connection: { password: "x", address: "ftp.example.com" }, note: "pw is hunter2-very-secret" });
    expect(out).toEqual({ connection: { password: MASK, address: "ftp.example.com" }, note: `pw is ${MASK}` });
  });

  it("never lets the logger print a registered secret, whatever the key", () => {
    registerSecret("s3cr3t-token-value");
    const { stream, text } = capture();
    const log = createLogger({ destination: stream, level: "info" });
    log.info({ connection: { password: "pw-in-object" }, url: "https://u:s3cr3t-token-value@host" }, "connecting with s3cr3t-token-value");
    log.error({ err: new Error("login failed for s3cr3t-token-value") }, "failed");
    const lines = text();
    expect(lines).not.toContain("s3cr3t-token-value");
    expect(lines).not.toContain("pw-in-object");
    expect(lines).toContain(MASK);
    expect(lines.trim().split("\n").map((l) => JSON.parse(l) as { level: string }).map((l) => l.level)).toEqual(["info", "error"]);
  });

  it("masks secrets in error messages", () => {
    registerSecret("another-secret-1");
    const err = new ConveyorError("auth", "login refused for password another-secret-1", { hint: "check another-secret-1" });
    expect(err.message).not.toContain("another-secret-1");
    expect(JSON.stringify(err.toJSON())).not.toContain("another-secret-1");
  });
});

describe("retry", () => {
  it("retries retryable errors and stops at the attempt limit", async () => {
    let calls = 0;
    await expect(
      withRetry(async () => {
        calls++;
        throw new ConveyorError("timeout", "slow", { retryable: true });
      }, { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 }),
    ).rejects.toThrow("slow");
    expect(calls).toBe(3);
  });

  it("never retries an error that is not retryable", async () => {
    let calls = 0;
    await expect(
      withRetry(async () => {
        calls++;
        throw new ConveyorError("auth", "wrong password");
      }, { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 }),
    ).rejects.toThrow("wrong password");
    expect(calls).toBe(1);
  });
});

describe("credentials in URLs and headers", () => {
  it("knows the names suppliers give a key, and not the names that only contain 'key'", () => {
    for (const name of ["apikey", "api_key", "API-KEY", "key", "access_key", "token", "X-Amz-Signature", "sig", "pwd"]) expect(isSecretParam(name), name).toBe(true);
    for (const name of ["sortkey", "keyword", "monkey", "format", "page", "since"]) expect(isSecretParam(name), name).toBe(false);
    for (const name of ["Authorization", "X-Api-Key", "Cookie", "X-Auth-Token"]) expect(isSecretHeader(name), name).toBe(true);
    expect(isSecretHeader("Accept")).toBe(false);
  });

  it("registers a URL's password and secret query values, and leaves the rest readable", () => {
    registerUrlSecrets("https://feeds:p%40ss-in-url-1@supplier.example/stock.csv?key=qk-7731-x&sortkey=price&page=2");
    const text = maskSecrets("sent p@ss-in-url-1 and qk-7731-x, sorted by price, page 2");
    expect(text).toBe(`sent ${MASK} and ${MASK}, sorted by price, page 2`);
  });

  it("masks a value of any length, and any number of them, where one expression of them all would not compile", () => {
    // A tenant's 100,000-character "client_secret" once made the mask's expression too large: every masked text threw.
    const huge = "<<x>>".repeat(20_000);
    registerSecret(huge);
    for (let i = 0; i < 3_000; i++) registerSecret(`many-secret-${i}-${"y".repeat(400)}`);
    registerSecret("short-secret-42");
    const text = maskSecrets(`a ${huge} b many-secret-7-${"y".repeat(400)} c short-secret-42 d`);
    expect(text).toBe(`a ${MASK} b ${MASK} c ${MASK} d`);
  });
});

