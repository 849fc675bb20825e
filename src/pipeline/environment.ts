import type { Settings } from "../config.js";
import type { RunEvents } from "../daemon/types.js";
import type { Automation } from "../definition/index.js";
import type { Logger } from "../log.js";
import type { ServiceClient } from "../service/index.js";
import type { RunParameters, RunRecord, StateStore } from "../state/index.js";

/** What a run needs from the worker: settings, state, the account's service client, a logger. */
export interface RunEnvironment {
  settings: Settings;
  store: StateStore;
  /** The account's client; each run takes a view of it that counts its own requests. */
  client: ServiceClient;
  account: string;
  logger: Logger;
  /** Key for encrypted parameters. */
  secretKey?: Buffer;
}

export type RunStage = "prepare" | "fetch" | "read" | "scope" | "plan" | "guards" | "apply" | "commit" | "select" | "render" | "deliver" | "done";

export interface RunProgress {
  stage: RunStage;
  rows: number;
  /** Files or bulk files done and in all, for stages that move whole files. */
  done?: number;
  total?: number;
}

export interface RunOptions extends RunParameters {
  /** The automation's stable key: its id in the daemon, its slug for a file. */
  key: string;
  automation: Automation;
  id?: string;
  signal?: AbortSignal;
  progress?: (p: RunProgress) => void;
  /** For tests: a fixed clock. */
  now?: () => Date;
  /** `--verbose`: connectors trace their protocol (secrets redacted) at debug level. */
  verbose?: boolean;
  /** How long to wait between two listings of a young file (tests shorten it). */
  stabilityPollMs?: number;
  /**
   * `conveyor run --file`: local files that feed the import instead of its
   * connection (automations.md: `connection` is "required except for a run
   * fed by a local file"). Each goes to the file configs whose `name` it
   * matches; no ledger, no after_import: the user's file is left as it is.
   */
  localFiles?: readonly string[];
  /** `conveyor undo`: this run takes back run `of` (narrowed to some identifiers or fields when given) instead of importing. */
  undo?: UndoRequest;
  /**
   * An event run (`trigger: event`) of an order export: it reads only these
   * events' orders, and its record names the events. Always a diff run, so
   * an order already delivered is not sent again.
   */
  events?: RunEvents;
}

export interface UndoRequest {
  of: string;
  /** `--identifier`: only these records (empty: all). */
  identifiers: readonly string[];
  /** `--field`: only these fields (empty: all). */
  fields: readonly string[];
}

export type RunResult = RunRecord;
