import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../log.js";
import type { StateStore } from "../state/index.js";
import type { SchedulerState } from "./types.js";

/**
 * `run_retention`: run records, their log records, their debug files (in the
 * store and in the data folder), settled webhook events and the scheduler's skip notes older than the
 * retention are forgotten, at start and then every hour.
 */
export interface RetentionOptions {
  store: StateStore;
  schedulerState: Pick<SchedulerState, "pruneSkips">;
  /** Webhook events all of whose claims are settled go with the runs of their age. */
  events?: { prune(before: Date): Promise<number> };
  dataDir: string;
  retentionMs: number;
  logger: Logger;
  everyMs?: number;
  now?: () => Date;
}

export async function pruneOnce(options: RetentionOptions): Promise<{ runs: number; folders: number }> {
  const before = new Date((options.now?.() ?? new Date()).getTime() - options.retentionMs);
  const runs = await options.store.pruneRuns(before);
  await options.schedulerState.pruneSkips(before);
  await options.events?.prune(before);
  let folders = 0;
  const root = path.join(options.dataDir, "runs");
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names) {
    // A folder whose run record is gone (pruned, or never recorded) is left over.
    if ((await options.store.getRun(name)) !== null) continue;
    await rm(path.join(root, name), { recursive: true, force: true });
    folders++;
  }
  return { runs, folders };
}

export function startRetention(options: RetentionOptions): () => void {
  const tick = (): void => {
    void pruneOnce(options).then(
      (pruned) => {
        if (pruned.runs || pruned.folders) options.logger.info({ event: "retention", ...pruned }, "old runs forgotten");
      },
      (err: unknown) => options.logger.error({ event: "retention_failed", err }, "pruning old runs failed"),
    );
  };
  tick();
  const timer = setInterval(tick, options.everyMs ?? 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
