import { SingleBar, Presets } from "cli-progress";
import type { RunProgress } from "../pipeline/environment.js";

/**
 * The progress line of a run on a terminal: stage, rows read, rows per
 * second. Nothing is drawn when standard error is not a terminal (scripts,
 * CI, `--json`), so logs stay clean.
 */
export interface ProgressView {
  update(p: RunProgress): void;
  stop(): void;
}

export function progressView(enabled: boolean): ProgressView {
  if (!enabled || !process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    {
      format: " {stage} | {rows} rows | {rate} rows/s | {duration_formatted}",
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    Presets.shades_classic,
  );
  const started = Date.now();
  bar.start(1, 0, { stage: "prepare", rows: 0, rate: 0 });
  return {
    update(p) {
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      bar.update(0, { stage: p.stage.padEnd(7), rows: p.rows.toLocaleString("en-US"), rate: Math.round(p.rows / seconds).toLocaleString("en-US") });
    },
    stop() {
      bar.stop();
    },
  };
}
