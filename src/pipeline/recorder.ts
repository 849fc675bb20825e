import { randomBytes } from "node:crypto";
import type { ConveyorError } from "../errors.js";
import type { AppliedKind, ApplyJournal } from "./apply-journal.js";
import type { RunProgress } from "./environment.js";
import { faultPoint } from "./faults.js";
import { ProgressSaver } from "./progress-saver.js";
import { addCounts, emptyCounts, type RunCounts, type RunFile, type RunOutcome, type RunParameters, type RunApplied, type RunRecord, type RunSubject, type StateStore } from "../state/index.js";

/** Time-sortable and unique across daemons: `r20261121T101500-3f9a1c`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "");
  return `r${stamp}-${randomBytes(3).toString("hex")}`;
}

export interface RunStart extends RunSubject, RunParameters {
  id?: string;
  /** An event run: the ids of the events it takes. */
  events?: readonly string[];
}

const HEARTBEAT_MS = 10_000;

/**
 * Keeps a run's record in the state store while it runs: counts as they
 * grow, a heartbeat so a crashed worker's run is detected, what reached
 * the service as each bulk file goes and its result is read (the journal of
 * the apply stages), and the one final write with the outcome.
 */
export class RunRecorder implements ApplyJournal {
  readonly record: RunRecord;
  private timer: NodeJS.Timeout | undefined;
  private readonly idle: string[] = [];
  private underWay: Readonly<RunCounts> | null = null;
  private readonly progressSaver: ProgressSaver;

  private constructor(
    private readonly store: StateStore,
    record: RunRecord,
  ) {
    this.record = record;
    this.progressSaver = new ProgressSaver((p) => store.saveProgress(record.id, p));
  }

  /** Where the run stands (stage, rows, files, rate), for readers of the store: at most one write a second. */
  progress(p: RunProgress): void {
    this.progressSaver.update(p);
  }

  static async start(store: StateStore, start: RunStart, now = new Date()): Promise<RunRecorder> {
    const record: RunRecord = {
      id: start.id ?? newRunId(now),
      automation: start.automation,
      account: start.account,
      mode: start.mode,
      trigger: start.trigger,
      diff: start.diff,
      force: start.force,
      notify: start.notify,
      email: start.email,
      started: now.toISOString(),
      finished: null,
      outcome: null,
      counts: emptyCounts(),
      requests: { read: 0, write: 0 },
      bytes: 0,
      files: [],
      debug_files: [],
      guard: null,
      error: null,
      heartbeat: now.toISOString(),
      ...(start.events ? { events: [...start.events] } : {}),
    };
    await store.createRun(record);
    const recorder = new RunRecorder(store, record);
    recorder.timer = setInterval(() => void recorder.beat(), HEARTBEAT_MS);
    recorder.timer.unref();
    return recorder;
  }

  get counts(): RunCounts {
    return this.record.counts;
  }

  /**
   * The tally of a pass still planning, which joins `counts` when its plan
   * ends (null then): the heartbeat writes the two added up, so a long plan
   * is seen growing without the pass writing into the run's counts.
   */
  passUnderWay(pass: Readonly<RunCounts> | null): void {
    this.underWay = pass;
  }

  /** The run's counts with those of the pass under way added in. */
  liveCounts(): RunCounts {
    if (!this.underWay) return this.record.counts;
    const sum = { ...this.record.counts };
    addCounts(sum, this.underWay);
    return sum;
  }

  addFile(file: RunFile): void {
    this.record.files.push(file);
    this.record.bytes += file.size;
  }

  /** A file config that found nothing to do, and why; kept as the run's note if the whole run ends with nothing. */
  noteIdle(reason: string): void {
    this.idle.push(reason);
  }

  /** What the connection learned (an accepted host key), kept with the run. */
  noteConnection(facts: Record<string, string>): void {
    if (Object.keys(facts).length > 0) this.record.connection = { ...this.record.connection, ...facts };
  }

  async planned(files: number): Promise<void> {
    const applied = this.applied();
    applied.planned_files = (applied.planned_files ?? 0) + files;
    await this.saveApply();
  }

  async sending(name: string, rows: number): Promise<void> {
    this.applied();
    this.record.unconfirmed_files = [...(this.record.unconfirmed_files ?? []).filter((f) => f.name !== name), { name, rows, job: null }];
    await this.saveApply();
  }

  /** An order body has no job: its answer is its result, and nothing is written until it is read. */
  async accepted(name: string, job: string | null): Promise<void> {
    if (job !== null) {
      this.record.unconfirmed_files = (this.record.unconfirmed_files ?? []).map((f) => (f.name === name ? { ...f, job } : f));
      await this.saveApply();
    }
    faultPoint("after-send", this.sent());
  }

  async confirmed(name: string, kind: AppliedKind, succeeded: number, failed: number): Promise<void> {
    const applied = this.applied();
    applied.files++;
    applied[kind] += succeeded;
    applied.failed += failed;
    await this.notSent(name);
    faultPoint("after-result", applied.files);
  }

  async notSent(name: string): Promise<void> {
    this.record.unconfirmed_files = (this.record.unconfirmed_files ?? []).filter((f) => f.name !== name);
    await this.saveApply();
  }

  private applied(): RunApplied {
    return (this.record.applied ??= { files: 0, planned_files: 0, created: 0, updated: 0, removed: 0, failed: 0 });
  }

  /** Files sent so far: those read and those still unconfirmed. */
  private sent(): number {
    return (this.record.applied?.files ?? 0) + (this.record.unconfirmed_files?.length ?? 0);
  }

  /**
   * Written before the next step, not in the background as the heartbeat is:
   * a kill right after a file goes must find it in the record. The counts go
   * along, so the record also holds the plan the files came from.
   */
  private async saveApply(): Promise<void> {
    const { applied, unconfirmed_files, counts } = this.record;
    this.record.heartbeat = new Date().toISOString();
    await this.store.updateRun(this.record.id, { applied, unconfirmed_files, counts, heartbeat: this.record.heartbeat });
  }

  private async beat(): Promise<void> {
    this.record.heartbeat = new Date().toISOString();
    await this.store
      .updateRun(this.record.id, { heartbeat: this.record.heartbeat, counts: this.liveCounts(), requests: this.record.requests })
      .catch(() => undefined);
  }

  async finish(outcome: RunOutcome, extra: { error?: ConveyorError; guard?: RunRecord["guard"]; debugFiles?: string[] } = {}): Promise<RunRecord> {
    if (this.timer) clearInterval(this.timer);
    // Before the final write, so no progress lands after it.
    await this.progressSaver.stop();
    Object.assign(this.record, {
      outcome,
      finished: new Date().toISOString(),
      heartbeat: null,
      guard: extra.guard ?? this.record.guard,
      error: extra.error ? runError(extra.error) : this.record.error,
      debug_files: extra.debugFiles ?? this.record.debug_files,
      ...(outcome === "nothing" && this.idle.length ? { note: this.idle.join("; ") } : {}),
    });
    const { id: _id, ...rest } = this.record;
    await this.store.updateRun(this.record.id, rest);
    return this.record;
  }
}

/** The record keeps the hint: a failed nightly run is read in a summary or an e-mail, where "how to fix it" matters most. */
export function runError(err: ConveyorError): NonNullable<RunRecord["error"]> {
  return err.hint ? { code: err.code, message: err.message, hint: err.hint } : { code: err.code, message: err.message };
}

export { emptyCounts };
