/**
 * What a run learns of a downloaded file by reading it whole: its SHA-256,
 * for the run record, and whether it holds one of the run's secrets, for a
 * debug run's copy of it (debug-mask.ts). A large file is read on a thread
 * of its own, for both in one read: the main thread, which reads, maps and plans the
 * file meanwhile, is the one a run waits for, and a second thread for the
 * search competed with it, and with the writer thread's start, for the same
 * two cores. Starting a thread costs more than reading a small file, which
 * is read here.
 *
 * @module
 */

import { stat } from "node:fs/promises";
import { ConveyorError } from "../../errors.js";
import { secretCount } from "../../secrets.js";
import { threadAnswer } from "../../thread.js";
import { hashAndSearch, secretForms, type SecretSearch } from "../secret-search.js";

const THREAD_FROM_BYTES = 16 << 20;

export interface FileDigest {
  sha256: string;
  /** The search of the same read for the run's secrets, when asked for (a debug run keeps a copy of the file). */
  searched?: SecretSearch;
}

/** What the thread answers: `{ sha256, found }`. */
function threadDigest(value: unknown): { sha256: string; found: boolean } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { sha256, found } = value as { sha256?: unknown; found?: unknown };
  return typeof sha256 === "string" && typeof found === "boolean" ? { sha256, found } : undefined;
}

/** `search`: also search the file for the run's secrets; a live run keeps no copy, and the search would be wasted. */
export async function downloadedDigest(file: string, search: boolean): Promise<FileDigest> {
  // Counted with the forms: a secret registered later has the debug copy search the file again.
  const secrets = secretCount();
  const forms = search ? secretForms() : [];
  try {
    const small = (await stat(file)).size < THREAD_FROM_BYTES;
    const { sha256, found } = small ? await hashAndSearch(file, forms) : await threadAnswer("hash-thread", import.meta.url, { file, forms }, threadDigest);
    return search ? { sha256, searched: { secrets, found } } : { sha256 };
  } catch (err) {
    throw new ConveyorError("internal", `Hashing ${file} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
