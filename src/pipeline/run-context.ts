/**
 * What the import and the export of a run share: the context a direction
 * runs in, and what its passes come to for the outcome decided in run.ts.
 *
 * @module
 */

import type { Automation } from "../definition/index.js";
import type { ConveyorError } from "../errors.js";
import type { ServiceClient } from "../service/index.js";
import type { DebugFiles } from "./debug-files.js";
import type { RunEnvironment, RunOptions, RunStage } from "./environment.js";
import type { RunRecorder } from "./recorder.js";

export interface RunContext {
  env: RunEnvironment;
  options: RunOptions;
  automation: Automation;
  recorder: RunRecorder;
  client: ServiceClient;
  debug: DebugFiles;
  workDir: string;
  now: () => Date;
  stage: (stage: RunStage, rows?: number, files?: { done: number; total: number }) => void;
}

/** The guard that stopped an import before anything was written (import/guards.ts): part of the outcome run.ts decides. */
export interface GuardTrip {
  name: "empty_feed" | "cut_feed" | "remove_limit" | "error_limit" | "change_limit";
  message: string;
  /** An empty feed never removes anything, forced or not. */
  forceable: boolean;
}

export interface PassOutcome {
  guard: GuardTrip | null;
  /** True when no config found a file to work on (an export: had nothing to send). */
  nothing: boolean;
  /** The error that stopped applying, when some records could not be sent at all. */
  applyError: ConveyorError | null;
  /** What the run keeps once it commits (an import's pointers): run.ts calls it for a live run that ends `success` or `partial`. */
  commit?: () => Promise<void>;
}
