import path from "node:path";
import type { RemoteFile } from "../../connectors/types.js";

// What the storage confinement tests (keys on S3, links on a folder) share.

/** A remote file named by its path in the account's storage. */
export function storageFile(p: string): RemoteFile {
  return { name: path.posix.basename(p), path: p, size: 0, modified: null };
}

export { caught as refusal } from "../helpers/caught.js";
