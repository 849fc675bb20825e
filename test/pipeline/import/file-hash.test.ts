import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadedDigest } from "../../../src/pipeline/import/file-hash.js";
import { registerSecret, secretCount } from "../../../src/secrets.js";

describe("downloadedDigest", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "file-hash-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function fileOf(name: string, bytes: Buffer): Promise<{ file: string; expected: string }> {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    return { file, expected: createHash("sha256").update(bytes).digest("hex") };
  }

  it("hashes a small file in place", async () => {
    const { file, expected } = await fileOf("small.csv", Buffer.from("sku;stock\nA-1;3\n"));
    expect((await downloadedDigest(file, false)).sha256).toBe(expected);
  });

  it("hashes a file past the thread's threshold on a thread, to the same digest", async () => {
    // 17 MB of varied bytes, chunk borders not aligned to the reader's 1 MB.
    const bytes = Buffer.alloc(17 * 2 ** 20 + 12_345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2_654_435_761) >>> 24;
    const { file, expected } = await fileOf("large.bin", bytes);
    expect((await downloadedDigest(file, false)).sha256).toBe(expected);
  });

  it("says whether the file holds a registered secret, read here or on the thread, and of how many secrets", async () => {
    const secret = "digest-secret-7373";
    registerSecret(secret);
    const small = await fileOf("small-secret.csv", Buffer.from(`sku;note\nA-1;${secret}\n`));
    expect((await downloadedDigest(small.file, true)).searched).toEqual({ secrets: secretCount(), found: true });
    // Past the threshold, with the secret cut by the reader's 1 MB chunk edge and the JSON form of another at the end.
    const quoted = 'digest"quoted-7474';
    registerSecret(quoted);
    const large = Buffer.concat([Buffer.alloc(2 ** 20 - 4, "x"), Buffer.from(secret), Buffer.alloc(16 * 2 ** 20, "y")]);
    const largeFile = await fileOf("large-secret.csv", large);
    // Read once for both: the bytes each window repeats of the one before are hashed once.
    expect(await downloadedDigest(largeFile.file, true)).toEqual({ sha256: largeFile.expected, searched: { secrets: secretCount(), found: true } });
    const jsonForm = Buffer.concat([Buffer.alloc(17 * 2 ** 20, "z"), Buffer.from(JSON.stringify(quoted).slice(1, -1))]);
    expect((await downloadedDigest((await fileOf("large-json.json", jsonForm)).file, true)).searched?.found).toBe(true);
    const clean = await fileOf("large-clean.csv", Buffer.alloc(17 * 2 ** 20, "w"));
    expect(await downloadedDigest(clean.file, true)).toEqual({ sha256: clean.expected, searched: { secrets: secretCount(), found: false } });
    // Not asked for (a live run keeps no copy): no search, nothing claimed of one.
    expect(await downloadedDigest(largeFile.file, false)).toEqual({ sha256: largeFile.expected });
  });

  it("names the file it could not hash", async () => {
    const missing = path.join(dir, "gone.csv");
    const err = await downloadedDigest(missing, false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("gone.csv");
  });
});
