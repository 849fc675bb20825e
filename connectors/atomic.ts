import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ConveyorError } from "../src/errors.js";
import type { TransferResult } from "./types.js";

// The transfer rules every connector shares: a file appears under its final
// name (local or remote) only once it is complete and its size matches, so a
// reader never picks up half a file and a failure leaves nothing behind under
// that name.

export async function localSize(localPath: string): Promise<number> {
  try {
    return (await stat(localPath)).size;
  } catch (err) {
    throw new ConveyorError("file_missing", `local file ${localPath} cannot be read for upload: ${(err as Error).message}`, { cause: err });
  }
}

function sizeMismatch(what: string, got: number, expected: number): ConveyorError {
  return new ConveyorError("transfer", `size check failed for ${what}: ${got} bytes arrived, ${expected} expected`, {
    retryable: true,
    hint: "The file may still be changing on the server, or the transfer was cut short; the run can be retried.",
    details: { got, expected },
  });
}

/**
 * Download through `<localPath>.part`: `fetch` writes the part file, its size
 * is checked against the listing (when the listing had one), then it is renamed.
 */
export async function atomicDownload(
  localPath: string,
  expectedSize: number | null,
  fetch: (partPath: string) => Promise<void>,
): Promise<TransferResult> {
  const part = `${localPath}.part`;
  await mkdir(path.dirname(localPath), { recursive: true });
  try {
    await fetch(part);
    const size = (await stat(part)).size;
    if (expectedSize !== null && expectedSize >= 0 && size !== expectedSize) throw sizeMismatch(path.basename(localPath), size, expectedSize);
    await rename(part, localPath);
    return { size };
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
}

export interface RemoteUploadOps {
  put(localPath: string, remoteTemp: string): Promise<void>;
  /** Size on the server, or null when it cannot be told. */
  size(remote: string): Promise<number | null>;
  /** Replaces `to` if it exists. */
  rename(from: string, to: string): Promise<void>;
  remove(remote: string): Promise<void>;
}

/** Upload to a temporary name in the same folder, check its size, then rename it into place. */
export async function atomicUpload(ops: RemoteUploadOps, localPath: string, remoteFinal: string, remoteTemp: string): Promise<TransferResult> {
  const expected = await localSize(localPath);
  try {
    await ops.put(localPath, remoteTemp);
    const size = await ops.size(remoteTemp);
    if (size !== null && size !== expected) throw sizeMismatch(remoteFinal, size, expected);
    await ops.rename(remoteTemp, remoteFinal);
    return { size: expected };
  } catch (err) {
    // Best effort: after a dropped connection the temporary file stays, but never under the final name.
    await ops.remove(remoteTemp).catch(() => undefined);
    throw err;
  }
}
