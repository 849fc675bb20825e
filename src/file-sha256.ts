/**
 * The SHA-256 of a file on disk, read through a lent buffer (read-buffers.ts
 * says why not a read stream). This module imports only Node's built-ins and
 * read-buffers.ts: a thread loads it alone.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { borrowReadBuffer, returnReadBuffer } from "./read-buffers.js";

export async function fileSha256(filePath: string): Promise<string> {
  const hash = createHash("sha256");
  const handle = await open(filePath, "r");
  const buffer = borrowReadBuffer();
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    returnReadBuffer(buffer);
    await handle.close();
  }
  return hash.digest("hex");
}
