import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadedSha256 } from "../../../src/pipeline/import/file-hash.js";

describe("downloadedSha256", () => {
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
    expect(await downloadedSha256(file)).toBe(expected);
  });

  it("hashes a file past the thread's threshold on a thread, to the same digest", async () => {
    // 17 MB of varied bytes, chunk borders not aligned to the reader's 1 MB.
    const bytes = Buffer.alloc(17 * 2 ** 20 + 12_345);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2_654_435_761) >>> 24;
    const { file, expected } = await fileOf("large.bin", bytes);
    expect(await downloadedSha256(file)).toBe(expected);
  });

  it("names the file it could not hash", async () => {
    const missing = path.join(dir, "gone.csv");
    const err = await downloadedSha256(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("gone.csv");
  });
});
