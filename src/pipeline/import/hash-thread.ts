/**
 * The thread of `downloadedDigest`: reads one file for its SHA-256 and for
 * the forms of the run's secrets it was handed, in one read.
 *
 * @module
 */

import { workerData } from "node:worker_threads";
import { answerParent } from "../../thread.js";
import { hashAndSearch } from "../secret-search.js";

const { file, forms } = workerData as { file: string; forms: string[] };
await answerParent(() => hashAndSearch(file, forms));
