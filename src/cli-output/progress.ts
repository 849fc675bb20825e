import type * as CliProgress from "cli-progress";
import { lazyRequire } from "../lazy-require.js";
import type { RunProgress } from "../pipeline/environment.js";
import { countLarge, noun } from "../plural.js";

/**
 * The progress line of a run on a terminal: stage, rows read, rows per
 * second while the feed is read, and during apply a bar of the bulk files
 * sent. Nothing is drawn when standard error is not a terminal (scripts,
 * CI, `--json`), so logs stay clean.
 */
export interface ProgressView {
  update(p: RunProgress): void;
  stop(): void;
}

/** Stages in which rows stream in: the rate means something only there. */
const READING = new Set(["read", "plan"]);
const BAR_WIDTH = 20;

// Only a run on a terminal draws the bar: `--json`, scripts and the daemon never load it.
const cliProgress = lazyRequire<typeof CliProgress>("cli-progress");

export interface ProgressState {
  /** When the first row-reading stage began (ms), null before. */
  readingSince: number | null;
  /** The last rate measured while reading: kept once the rows stop coming. */
  rate: number;
}

/** The line's fields for one update (`rows` with its noun: "1 row"); pure, so what a user sees is tested without a terminal. */
export function progressFields(p: RunProgress, state: ProgressState, now: number): { stage: string; rows: string; rate: string; files: string } {
  if (READING.has(p.stage)) {
    state.readingSince ??= now;
    const seconds = (now - state.readingSince) / 1000;
    if (seconds >= 0.5) state.rate = Math.round(p.rows / seconds);
  }
  let files = "";
  if (p.total !== undefined && p.total > 0) {
    const done = Math.min(p.done ?? 0, p.total);
    const filled = Math.round((done / p.total) * BAR_WIDTH);
    files = `${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)} ${done}/${p.total} bulk ${noun(p.total, "file")} | `;
  }
  return { stage: p.stage.padEnd(7), rows: countLarge(p.rows, "row"), rate: state.rate.toLocaleString("en-US"), files };
}

export function progressView(enabled: boolean): ProgressView {
  if (!enabled || !process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const { SingleBar, Presets } = cliProgress();
  const bar = new SingleBar(
    {
      format: " {stage} | {rows} | {rate} rows/s | {files}{duration_formatted}",
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    Presets.shades_classic,
  );
  const state: ProgressState = { readingSince: null, rate: 0 };
  bar.start(1, 0, { stage: "prepare", rows: 0, rate: 0, files: "" });
  return {
    update(p) {
      bar.update(0, progressFields(p, state, Date.now()));
    },
    stop() {
      bar.stop();
    },
  };
}
