import { existsSync, statSync } from "node:fs";
import type { Settings } from "../config.js";
import { openDaemonDb } from "../daemon/daemon-db.js";
import { loadAutomationFile } from "../definition/index.js";
import type { RunRecord, StateStore } from "../state/index.js";

/**
 * Runs of an automation stored in the state database are keyed by its id,
 * whoever started them (daemon, API or `conveyor run`); people remember
 * slugs, and a definition file names its slug. All three are accepted; a
 * slug also finds the runs of a file no stored automation has.
 */
async function automationKeys(settings: Settings, store: StateStore, arg: string): Promise<string[]> {
  const slug = existsSync(arg) && statSync(arg).isFile() ? (await loadAutomationFile(arg)).slug : arg;
  const keys = [slug];
  const db = openDaemonDb(settings, store);
  try {
    for (const a of await db.definitions.all()) if (a.slug === slug) keys.push(String(a.id));
  } finally {
    await db.close();
  }
  return keys;
}

/** The newest `limit` runs of the automation named by id, slug or definition file, newest first. */
export async function automationRuns(settings: Settings, store: StateStore, arg: string, limit: number): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  for (const key of await automationKeys(settings, store, arg)) runs.push(...(await store.listRuns({ automation: key, limit })));
  return runs.sort((a, b) => (a.started < b.started ? 1 : -1)).slice(0, limit);
}
