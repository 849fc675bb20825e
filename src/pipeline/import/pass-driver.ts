/**
 * One import pass (runs.md, steps 4 to 9), whatever its records:
 * read, scope and plan (the strategy's), then the guards, apply, the fault
 * point after it, the snapshot and the ledger (the driver's). Products,
 * orders and bulk files differ only in the steps a `PassStrategy` supplies;
 * the bookkeeping around them is written once, here.
 *
 * @module
 */

import type { Automation, FileConfig } from "../../definition/index.js";
import type { ServiceClient } from "../../service/index.js";
import { addCounts, emptyCounts, type RunCounts, type StateStore } from "../../state/index.js";
import type { ApplyJournal, FailedRecords } from "../apply-journal.js";
import type { ApplyResult } from "./apply-products.js";
import type { DebugFiles, SourcePlace } from "../debug-files.js";
import { faultPoint } from "../faults.js";
import type { FetchedFile } from "./fetch.js";
import type { GuardTrip } from "../run-context.js";
import { checkGuards, type GuardInput } from "./guards.js";
import { notPlannedLog, type LogWriter } from "../logs.js";
import type { PointerTally } from "./pointer-tally.js";
import type { UndoJournalWriter } from "../../undo/journal-writer.js";

export type PassStage = "read" | "scope" | "plan" | "apply" | "commit";

/** What every pass of one `file_configs[]` entry works with. */
export interface PassInput {
  automation: Automation;
  config: FileConfig;
  snapshotKey: string;
  /** The downloads under way: a product pass reads its scope meanwhile. */
  files: Promise<readonly FetchedFile[]>;
  /** The files' bytes as their listing gave them, known before they download (0 where it gives none). */
  listedBytes?: number;
  workDir: string;
  debug: DebugFiles;
  client: ServiceClient;
  store: StateStore;
  logs: LogWriter;
  runId: string;
  live: boolean;
  diff: boolean;
  force: boolean;
  bulkRows: number;
  now: () => Date;
  signal?: AbortSignal;
  /** Told what reaches the service, file by file (the run record). */
  journal?: ApplyJournal;
  /** A live product pass: the run's undo journal, and this pass's file config index in it. */
  undo?: { writer: UndoJournalWriter; config: number };
  /** The run's pointer candidates, offered each record the pass reads. */
  pointers?: PointerTally;
  /** `files`: bulk files sent and in all, during apply. */
  onStage?: (stage: PassStage, rows: number, files?: { done: number; total: number }) => void;
}

/** What the guards weigh besides the pass's row errors and the file config's limits. */
export type GuardFacts = Pick<GuardInput, "rows" | "cutAt" | "firstError" | "removals" | "scopeSize" | "removeConfigured" | "changes">;

/** What read, scope and plan leave for the driver (the counts are in the pass's tally). */
export interface PassPlan {
  /** Null when no file got as far as its header: there is nothing to guard or apply. */
  facts: GuardFacts | null;
  /** Files to send, when apply reports its progress file by file. */
  applyFiles?: number;
}

/** The steps in which products, orders and bulk files differ. */
export interface PassStrategy {
  /**
   * Read, scope and plan. `counts` is the pass's tally, which the driver owns
   * and the strategy adds to as it goes: the run's heartbeat shows it growing
   * during a long plan, and a pass that fails partway still leaves what it
   * counted (its row errors) in the failed run's record.
   */
  plan(counts: RunCounts): Promise<PassPlan>;
  apply(onFile: (done: number, total: number) => void): Promise<ApplyResult>;
  /** Where the failed records stand in the feed, for errors.csv. */
  places?(files: readonly FetchedFile[], failed: FailedRecords): Promise<Map<string, SourcePlace>>;
  /** Puts what was applied into the snapshot; a pass without one has no snapshot. */
  commit?(apply: ApplyResult): Promise<void>;
  /** Frees what the pass holds (its work database, threads), however it ended. */
  close?(): Promise<void>;
}

export interface PassRun {
  input: PassInput;
  /** The run's counts: the driver adds each pass's to them. */
  counts: RunCounts;
  /** Shown the pass's tally while it plans, then null once the tally has joined `counts`: the run's heartbeat adds it in. */
  underWay?: (pass: Readonly<RunCounts> | null) => void;
  open(input: PassInput): Promise<PassStrategy>;
  /** The ledger and after_import, for files a live pass applied without a fatal error. */
  ledger(files: readonly FetchedFile[]): Promise<void>;
}

export interface ImportPassResult {
  guard: GuardTrip | null;
  apply: ApplyResult | null;
}

export async function runPass({ input, counts, underWay, open, ledger }: PassRun): Promise<ImportPassResult> {
  const { config } = input;
  const strategy = await open(input);
  const tally = emptyCounts();
  let apply: ApplyResult;
  try {
    const plan = await planCounted(strategy, tally, counts, underWay);
    if (!plan.facts) return { guard: null, apply: null };
    const rows = plan.facts.rows;
    // The run's counts add up every file config; error_limit weighs this pass's errors against this pass's rows.
    const guard = checkGuards({ ...plan.facts, rowErrors: tally.row_errors, removeLimit: config.remove_limit, errorLimit: config.error_limit, force: input.force });
    if (guard || !input.live) return { guard, apply: null };

    const total = plan.applyFiles;
    input.onStage?.("apply", rows, total === undefined ? undefined : { done: 0, total });
    apply = await strategy.apply((done, all) => input.onStage?.("apply", rows, { done, total: all }));
    counts.failed += apply.failed.size;
    tally.failed += apply.failed.size;
    const files = await input.files;
    await input.debug.addFailures(apply.failed, strategy.places ? await strategy.places(files, apply.failed) : undefined);
    faultPoint("after-apply");

    if (strategy.commit) {
      input.onStage?.("commit", rows);
      await commitSnapshot(input, strategy.commit.bind(strategy), apply);
    }
  } finally {
    await strategy.close?.();
  }
  // A file of which nothing could be applied stays where it is, unrecorded: the next run tries it again.
  if (!apply.error && !failedThrough(tally)) await ledger(await input.files);
  return { guard: null, apply };
}

/** The strategy's plan with the pass's tally on show; the tally joins the run's counts however the plan ends. */
async function planCounted(strategy: PassStrategy, tally: RunCounts, counts: RunCounts, underWay: PassRun["underWay"]): Promise<PassPlan> {
  underWay?.(tally);
  try {
    return await strategy.plan(tally);
  } finally {
    underWay?.(null);
    addCounts(counts, tally);
  }
}

/** Step 9: the strategy puts what was applied; a full run then forgets what it did not see. */
async function commitSnapshot(input: PassInput, commit: (apply: ApplyResult) => Promise<void>, apply: ApplyResult): Promise<void> {
  // The store stamps entries with its own clock; prune by the same clock.
  const started = new Date().toISOString();
  await commit(apply);
  if (!input.diff) await input.store.snapshotPruneBefore(input.snapshotKey, started);
}

/** The pass failed every record it meant to change (refused by the service, or rows in error) and left none unchanged. */
function failedThrough(c: RunCounts): boolean {
  const applied = c.create + c.update + c.remove - c.failed;
  return (c.failed > 0 || c.row_errors > 0) && applied <= 0 && c.unchanged === 0;
}

/** A row that cannot be planned: counted, listed in errors.csv and, live, logged against its record. */
export async function reportRowError(input: PassInput, counts: RunCounts, line: number | null, identifier: string, message: string): Promise<void> {
  counts.row_errors++;
  await input.debug.addError(line, identifier, message);
  if (input.live && identifier !== "") input.logs.add(notPlannedLog({ kind: "error", identifier, line: line ?? 0, message }));
}
