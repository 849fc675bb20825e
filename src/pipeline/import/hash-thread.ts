/**
 * The thread of `downloadedDigest`: reads one file for its SHA-256 and for
 * the forms of the run's secrets it was handed, both at once.
 *
 * @module
 */

import { workerData } from "node:worker_threads";
import { fileSha256 } from "../../file-sha256.js";
import { answerParent } from "../../thread.js";
import { holdsForm } from "../secret-search.js";

const { file, forms } = workerData as { file: string; forms: string[] };
await answerParent(async () => {
  const [sha256, found] = await Promise.all([fileSha256(file), holdsForm(file, forms)]);
  return { sha256, found };
});
