import type { Settings } from "../../config.js";
import type { Logger } from "../../log.js";
import type { RunRecord, StateStore } from "../../state/index.js";
import { isPostgresUrl } from "../../state/pg-connect.js";
import type { RunQueue } from "../queue.js";
import type { SchedulerState } from "../types.js";
import { startCluster, type Cluster } from "./index.js";

/** How often a daemon re-reads the definitions, so automations added or edited through another daemon are scheduled here too. */
const RESYNC_MS = 30_000;

export interface JoinedCluster extends Cluster {
  close(): Promise<void>;
}

/**
 * The daemon's step into the cluster when its database is PostgreSQL (null
 * otherwise): the shared queue, fire claims and leases, and a periodic
 * re-read of the shared definitions.
 */
export async function joinCluster(
  settings: Pick<Settings, "databaseUrl" | "concurrency" | "maxRunTimeMs" | "runLeaseMs">,
  parts: { queue: RunQueue; store: StateStore; schedulerState: SchedulerState; logger: Logger; resync: () => void },
): Promise<JoinedCluster | null> {
  const url = settings.databaseUrl;
  if (!url || !isPostgresUrl(url)) return null;
  const { logger } = parts;
  const cluster = await startCluster({
    databaseUrl: url,
    queue: parts.queue,
    store: parts.store,
    schedulerState: parts.schedulerState,
    concurrency: settings.concurrency,
    maxRunTimeMs: settings.maxRunTimeMs,
    leaseMs: settings.runLeaseMs,
    logger,
    onRecovered: (runs: RunRecord[]) => logger.warn({ event: "runs_interrupted", runs: runs.map((r) => r.id) }, "runs whose daemon stopped renewing their lease marked failed (interrupted)"),
  });
  const timer = setInterval(parts.resync, RESYNC_MS);
  timer.unref();
  return {
    ...cluster,
    close: async () => {
      clearInterval(timer);
      await cluster.close();
    },
  };
}
