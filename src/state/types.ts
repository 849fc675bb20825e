import type { Readable } from "node:stream";
import type { LogBatch, LogPage, LogQuery } from "./log-types.js";
import type { SnapshotPutEntry } from "./snapshot-entry.js";

export * from "./log-types.js";
export * from "./snapshot-entry.js";

/**
 * The state a worker keeps between runs: run records, diff snapshots, the
 * processed-file ledger, log records, and each automation's metadata. SQLite
 * implements it by default; PostgreSQL implements the same interface for
 * several daemons. Every method is async so both fit.
 */

export type RunMode = "prod" | "debug";
export type RunTrigger = "schedule" | "manual" | "api" | "event";
export type RunOutcome = "success" | "partial" | "failed" | "canceled" | "nothing";

export interface RunCounts {
  rows: number;
  row_errors: number;
  create: number;
  update: number;
  unchanged: number;
  remove: number;
  skipped: number;
  failed: number;
  /** Rows that shared an identifier with an earlier row (products: the last one won; orders: they joined its order). */
  merged: number;
  /** Planned fields whose new value the service holds already (plan.csv's `same`); records before this count have none. */
  same_fields: number;
  /** Updates whose every field the service holds already: a full run sends them all the same, a diff run plans them `unchanged`. */
  same: number;
}

/**
 * What reached the service, as it confirmed it: the rows of every bulk file
 * (an order run: every request body) whose result was read, by the change
 * the file made. Kept as each result is read, so a run killed mid-apply
 * leaves a record that says what the service holds.
 */
export interface RunApplied {
  /** Files (bodies) whose result was read. */
  files: number;
  /** Files (bodies) the applied passes were to send, read or not. */
  planned_files?: number;
  created: number;
  updated: number;
  removed: number;
  failed: number;
}

/** A file (body) sent whose result was never read: the service may hold some, all or none of its rows. */
export interface UnconfirmedFile {
  name: string;
  rows: number;
  /** The service's job (bulk_file) when its answer to the upload came back. */
  job: string | null;
}

export interface RunFile {
  name: string;
  size: number;
  sha256: string;
  modified?: string | null;
}

/** What a run was asked to do: the seed's run parameters plus mode and trigger. */
export interface RunParameters {
  mode: RunMode;
  trigger: RunTrigger;
  diff: boolean;
  force: boolean;
  notify: boolean;
  email: string | null;
}

/** Which automation a run is of, and whose. */
export interface RunSubject {
  /** The automation's stable key (its id in the daemon, its slug for a file run). */
  automation: string;
  account: string;
}

/** One reason records failed for: the service's message without the record it names, how many, and the first few identifiers. */
export interface RunFailure {
  message: string;
  count: number;
  examples: string[];
}

export interface RunRecord extends RunSubject, RunParameters {
  id: string;
  started: string;
  finished: string | null;
  /** null while the run is running. */
  outcome: RunOutcome | null;
  counts: RunCounts;
  requests: { read: number; write: number };
  bytes: number;
  files: RunFile[];
  debug_files: string[];
  guard: { name: string; message: string } | null;
  /** Why a run had nothing to do (outcome `nothing`): which files were passed over and why, or that no record was selected. */
  note?: string;
  /**
   * The records the apply stage failed (the service refused them, or they were not sent or not confirmed),
   * grouped by the reason the service gave, most frequent first; each has every record in errors.csv.
   * Absent when none failed (and on records from before it was kept).
   */
  failures?: RunFailure[];
  /** Debug files kept with a secret masked (`bulk-1.csv: 3 values masked; it cannot be sent as is`); absent when none. */
  masked?: Array<{ file: string; values: number; note: string }>;
  /** What the connection learned (sftp: `host_key`, the fingerprint the server offered and the run accepted). */
  connection?: Record<string, string>;
  /** `hint`: how to fix it, when the error knows (the CLI summary, the API and the notifications show it). */
  error: { code: string; message: string; hint?: string } | null;
  /** What the service confirmed so far (absent until a live run applies). */
  applied?: RunApplied;
  /** Files sent whose result was not read: a run that ends with any was interrupted or failed mid-apply. */
  unconfirmed_files?: UnconfirmedFile[];
  /**
   * A live product import's undo journal (`chunks` stored, `entries` in them),
   * or why the run cannot be undone (`reason`: an order import, an export).
   */
  undo?: { journal: boolean; chunks?: number; entries?: number; bytes?: number; reason?: string };
  /** An event run (`trigger: event`): the ids of the service events it took. */
  events?: string[];
  /** An undo run: the run it takes back. */
  undo_of?: string;
  /** An undo run: the fields it left alone because the service no longer held the value the run set (conflicts.csv). */
  conflicts?: number;
  /** Last sign of life of a running run: a run whose heartbeat stopped was interrupted. */
  heartbeat: string | null;
  /** Where a running run stands (saved with its heartbeat, at most once a second); absent once it finished. */
  progress?: RunProgressSnapshot;
}

/** The latest progress of a running run, as every daemon sharing the store reads it. */
export interface RunProgressSnapshot {
  stage: string;
  rows: number;
  /** Files (bulk files) done and in all, in stages that move whole files. */
  files: { done: number; total: number } | null;
  /** Rows per second while rows are read and planned; the last figure after. */
  rate: number;
  /** When it was measured. */
  at: string;
}

export function emptyCounts(): RunCounts {
  return { rows: 0, row_errors: 0, create: 0, update: 0, unchanged: 0, remove: 0, skipped: 0, failed: 0, merged: 0, same_fields: 0, same: 0 };
}

/** Adds `part` (a pass's counts) into `total`, key by key. */
export function addCounts(total: RunCounts, part: Readonly<RunCounts>): void {
  for (const key of Object.keys(part) as Array<keyof RunCounts>) total[key] += part[key];
}

/** The seed's status object (v3 part 2.2), derived from run records. */
export interface AutomationStatus {
  debug_files: string[];
  last_run_id: string | null;
  last_run_start_debug: string | null;
  last_run_finish_debug: string | null;
  last_run_success_debug: boolean | null;
  last_run_start_prod: string | null;
  last_run_finish_prod: string | null;
  last_run_success_prod: boolean | null;
}

/** A processed file of the ledger: keyed by path, size and modification time. */
export interface LedgerEntry {
  path: string;
  size: number;
  modified: string | null;
}

export interface RunListQuery {
  automation?: string;
  account?: string;
  limit?: number;
  mode?: RunMode;
  /** The runs that took this service event (its id). */
  event?: string;
}

/** The no-overlap lock of one automation: the run that holds it, and its holder's last sign of life. */
export interface AutomationLock {
  automation: string;
  run_id: string;
  /** Who runs it: `daemon <host>:<pid>` or `cli <host>:<pid>` (PostgreSQL cluster daemons: their daemon name). */
  holder: string;
  started: string;
  heartbeat: string;
}

export interface LockRequest {
  automation: string;
  runId: string;
  holder: string;
}

/** A debug file of a run as the store keeps it; streamed, since one can be as big as the feed. */
export interface StoredDebugFile {
  size: number;
  /** From byte `start` (0: the whole file): the plan viewer reads a page of a million-line plan.csv without the lines before it. */
  open(start?: number): Readable;
}

export interface StateStore {
  /**
   * The SQLite file the store keeps its state in, which another thread may
   * open to read apart (a diff run's source index); none for a store that a
   * thread cannot open by a path.
   */
  readonly localFile?: string;
  createRun(run: RunRecord): Promise<void>;
  /**
   * The progress of a running run and its heartbeat, in a column of their own:
   * a write a second costs no read of the record, and a run that finished
   * (outcome set) is left as it is.
   */
  saveProgress(id: string, progress: RunProgressSnapshot): Promise<void>;
  /** Merge `patch` into the run; the id never changes. */
  updateRun(id: string, patch: Partial<Omit<RunRecord, "id">>): Promise<void>;
  getRun(id: string): Promise<RunRecord | null>;
  listRuns(query?: RunListQuery): Promise<RunRecord[]>;
  /**
   * Runs still open whose heartbeat is older than `staleBefore`, or whose id is
   * in `dead` (runs whose process is known to be gone), become failed ("interrupted"). Returns them.
   */
  markInterrupted(staleBefore: Date, dead?: readonly string[]): Promise<RunRecord[]>;
  /** Delete finished runs older than the date (run_retention). */
  pruneRuns(before: Date): Promise<number>;
  status(automation: string): Promise<AutomationStatus>;
  resetStatus(automation: string, mode: RunMode): Promise<void>;

  /** Snapshot of one automation's file config: identifier → the values last applied. */
  snapshotGet(key: string, identifiers: readonly string[]): Promise<Map<string, Record<string, string>>>;
  /**
   * The same entries as the JSON text they were stored as (`JSON.stringify` of
   * the values): a diff run compares most records by this text alone, without
   * parsing a million snapshot entries that did not change.
   */
  snapshotText(key: string, identifiers: readonly string[]): Promise<Map<string, string>>;
  /**
   * The source fingerprints of the entries that have one: a diff run
   * recognises an unchanged row by it without mapping the row or reading
   * its values.
   */
  snapshotSources(key: string, identifiers: readonly string[]): Promise<Map<string, string>>;
  /**
   * Every entry of the key as identifier and source fingerprint (null for an
   * entry without one), in pages in identifier order: one sequential read
   * instead of a lookup per identifier, for a diff run's source index.
   */
  snapshotSourcePages(key: string, pageSize?: number): AsyncGenerator<Array<[string, string | null]>>;
  snapshotPut(key: string, entries: readonly SnapshotPutEntry[]): Promise<void>;
  snapshotDelete(key: string, identifiers: readonly string[]): Promise<void>;
  snapshotCount(key: string): Promise<number>;
  /** A full run replaces the snapshot: entries not re-put since `since` are removed. */
  snapshotPruneBefore(key: string, since: string): Promise<number>;

  ledgerHas(key: string, entry: LedgerEntry): Promise<boolean>;
  ledgerAdd(key: string, entries: readonly LedgerEntry[]): Promise<void>;

  addLogs(account: string, logs: LogBatch): Promise<void>;
  searchLogs(query: LogQuery): Promise<LogPage>;

  /**
   * Keeps the run's debug file `name` (written locally at `file`) where every
   * worker sharing this store can read it. Called when the run ends.
   */
  putDebugFile(runId: string, name: string, file: string): Promise<void>;
  /** null when the run has no such file; the name must pass `isDebugFileName`. */
  getDebugFile(runId: string, name: string): Promise<StoredDebugFile | null>;
  /** The names kept for the run, sorted; `source/…` for downloaded files. */
  listDebugFiles(runId: string): Promise<string[]>;

  /**
   * Takes the automation's no-overlap lock for the run unless a live run holds
   * it, atomically across processes; a holder silent for `leaseMs` is dead and
   * loses it. Returns the lock as it stands: this run's when taken (asking
   * again renews it), another run's when that one holds it.
   */
  lockAutomation(request: LockRequest, leaseMs: number): Promise<AutomationLock>;
  /** The holder's sign of life; false when the run no longer holds the lock (it was taken over as dead). */
  renewLock(automation: string, runId: string): Promise<boolean>;
  releaseLock(automation: string, runId: string): Promise<void>;

  /** Stores chunk `chunk` (gzip'd JSON lines) of the run's undo journal; deleted with the run record. */
  putUndoChunk(runId: string, chunk: number, body: Buffer): Promise<void>;
  /** The run's undo journal, its chunks in order; empty when it has none. */
  getUndoChunks(runId: string): Promise<Buffer[]>;

  getMetadata(automation: string): Promise<Record<string, unknown>>;
  setMetadata(automation: string, metadata: Record<string, unknown>): Promise<void>;

  close(): Promise<void>;
}
