/**
 * The thread of `debug-mask.ts`'s search of a large file: searches it for
 * the forms of the run's secrets it was handed, answers whether one is there.
 *
 * @module
 */

import { workerData } from "node:worker_threads";
import { answerParent } from "../thread.js";
import { holdsForm } from "./secret-search.js";

const { file, forms } = workerData as { file: string; forms: string[] };
await answerParent(() => holdsForm(file, forms));
