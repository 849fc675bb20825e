import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileSha256 } from "../../src/file-sha256.js";
import { borrowReadBuffer, READ_BUFFER_BYTES, returnReadBuffer } from "../../src/read-buffers.js";

describe("fileSha256 through lent buffers", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "file-sha256-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("hashes more files at once than there are spare buffers, each to its own digest", async () => {
    // Sizes around the buffer's: empty, one byte short, exact, one over, several buffers and a tail.
    const sizes = [0, READ_BUFFER_BYTES - 1, READ_BUFFER_BYTES, READ_BUFFER_BYTES + 1, 3 * READ_BUFFER_BYTES + 777, 12_345, 1];
    const files = await Promise.all(
      sizes.map(async (size, n) => {
        const bytes = Buffer.alloc(size);
        for (let i = 0; i < size; i++) bytes[i] = (i * 31 + n * 7) & 0xff;
        const file = path.join(dir, `f${n}.bin`);
        await writeFile(file, bytes);
        return { file, expected: createHash("sha256").update(bytes).digest("hex") };
      }),
    );
    const digests = await Promise.all(files.map((f) => fileSha256(f.file)));
    expect(digests).toEqual(files.map((f) => f.expected));
  });

  it("lends a returned buffer again and keeps none of another size", () => {
    const a = borrowReadBuffer();
    returnReadBuffer(a);
    expect(borrowReadBuffer()).toBe(a);
    returnReadBuffer(Buffer.alloc(16));
    expect(borrowReadBuffer().length).toBe(READ_BUFFER_BYTES);
  });
});
