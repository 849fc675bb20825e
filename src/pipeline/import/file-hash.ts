/**
 * The SHA-256 of a downloaded file, for the run record. A large one is
 * hashed on a thread of its own: the main thread, which reads, maps and
 * plans the file meanwhile, is the one a run waits for. Starting a thread
 * costs more than hashing a small file, which is hashed here.
 *
 * @module
 */

import { stat } from "node:fs/promises";
import { ConveyorError } from "../../errors.js";
import { fileSha256 } from "../../file-sha256.js";
import { startThread } from "../../thread.js";

const THREAD_FROM_BYTES = 16 << 20;

export async function downloadedSha256(file: string): Promise<string> {
  if ((await stat(file)).size < THREAD_FROM_BYTES) return fileSha256(file);
  const thread = startThread("hash-thread", import.meta.url, file);
  try {
    const answer = await new Promise<{ sha256?: string; error?: string }>((resolve, reject) => {
      thread.once("message", resolve);
      thread.once("error", reject);
      thread.once("exit", (code) => reject(new Error(`the thread stopped without an answer (exit code ${code})`)));
    });
    if (answer.sha256 !== undefined) return answer.sha256;
    throw new Error(answer.error ?? "no answer");
  } catch (err) {
    throw new ConveyorError("internal", `Hashing ${file} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  } finally {
    await thread.terminate();
  }
}
