import path from "node:path";
import type { RemoteFile } from "../../connectors/types.js";
import { ConveyorError } from "../../src/errors.js";

// What the storage confinement tests (keys on S3, links on a folder) share.

/** A remote file named by its path in the account's storage. */
export function storageFile(p: string): RemoteFile {
  return { name: path.posix.basename(p), path: p, size: 0, modified: null };
}

/** The ConveyorError an operation is refused with; fails the test when it is not refused. */
export async function refusal(p: Promise<unknown>): Promise<ConveyorError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConveyorError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}
