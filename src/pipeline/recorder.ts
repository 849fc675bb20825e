import { randomBytes } from "node:crypto";
import type { ConveyorError } from "../errors.js";
import { emptyCounts, type RunCounts, type RunFile, type RunOutcome, type RunParameters, type RunRecord, type RunSubject, type StateStore } from "../state/index.js";

/** Time-sortable and unique across daemons: `r20261121T101500-3f9a1c`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "");
  return `r${stamp}-${randomBytes(3).toString("hex")}`;
}

export interface RunStart extends RunSubject, RunParameters {
  id?: string;
}

const HEARTBEAT_MS = 10_000;

/**
 * Keeps a run's record in the state store while it runs: counts as they
 * grow, a heartbeat so a crashed worker's run is detected, and the one
 * final write with the outcome.
 */
export class RunRecorder {
  readonly record: RunRecord;
  private timer: NodeJS.Timeout | undefined;
  private readonly idle: string[] = [];

  private constructor(
    private readonly store: StateStore,
    record: RunRecord,
  ) {
    this.record = record;
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

  private async beat(): Promise<void> {
    this.record.heartbeat = new Date().toISOString();
    await this.store
      .updateRun(this.record.id, { heartbeat: this.record.heartbeat, counts: this.record.counts, requests: this.record.requests })
      .catch(() => undefined);
  }

  async finish(outcome: RunOutcome, extra: { error?: ConveyorError; guard?: RunRecord["guard"]; debugFiles?: string[] } = {}): Promise<RunRecord> {
    if (this.timer) clearInterval(this.timer);
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
