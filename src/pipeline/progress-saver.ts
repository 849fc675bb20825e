/**
 * The latest progress of a running run, kept in the state store where every
 * daemon of a cluster reads it (the run page, `GET /v3/automations/runs/{id}`).
 * The pipeline reports progress for every batch of rows; the store gets at
 * most one write a second, and the last figure is always written in the end
 * (a trailing write), so a run that sits in one stage shows where it sits.
 *
 * @module
 */

import type { RunProgressSnapshot } from "../state/index.js";
import type { RunProgress } from "./environment.js";

/** Stages in which rows stream in: a rate means something only there (as on the CLI's progress line). */
const READING = new Set(["read", "plan"]);

export const PROGRESS_EVERY_MS = 1_000;

export class ProgressSaver {
  private latest: RunProgressSnapshot | null = null;
  private lastSave = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | null = null;
  private readingSince: number | null = null;
  private rate = 0;
  private stopped = false;

  constructor(
    private readonly save: (progress: RunProgressSnapshot) => Promise<void>,
    private readonly clock: () => number = Date.now,
    private readonly everyMs = PROGRESS_EVERY_MS,
  ) {}

  /** What the pipeline reports; saved now, or at the end of the current second. */
  update(p: RunProgress): void {
    if (this.stopped) return;
    const now = this.clock();
    if (READING.has(p.stage)) {
      this.readingSince ??= now;
      const seconds = (now - this.readingSince) / 1000;
      if (seconds >= 0.5) this.rate = Math.round(p.rows / seconds);
    }
    const files = p.total !== undefined && p.total > 0 ? { done: Math.min(p.done ?? 0, p.total), total: p.total } : null;
    this.latest = { stage: p.stage, rows: p.rows, files, rate: this.rate, at: new Date(now).toISOString() };
    this.schedule(now);
  }

  private schedule(now: number): void {
    if (this.timer || this.saving) return;
    const wait = this.lastSave + this.everyMs - now;
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
    this.timer.unref();
  }

  private flush(): void {
    const progress = this.latest;
    if (!progress || this.stopped) return;
    this.latest = null;
    this.lastSave = this.clock();
    // Progress is a view: a failed write never fails the run; the next one tries again.
    this.saving = this.save(progress)
      .catch(() => undefined)
      .finally(() => {
        this.saving = null;
        if (this.latest) this.schedule(this.clock());
      });
  }

  /** The run ends: nothing more is saved (the final record replaces the progress). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.saving;
  }
}
