import path from "node:path";
import type { Settings } from "../config.js";
import type { Logger } from "../log.js";
import { maskSecrets } from "../secrets.js";
import type { DaemonDb } from "./daemon-db.js";
import type { DefinitionService } from "./definitions.js";
import type { SilenceCandidate } from "./notify.js";
import type { RunQueue } from "./queue.js";
import { copySampleStorage, loadDefinitionsFolder, seedSampleProducts } from "./setup.js";

/** The automation's name for mails and logs; its key when it is gone or no longer validates. */
export async function automationName(definitions: DefinitionService, key: string): Promise<string> {
  const stored = await definitions.byKey(key);
  if (!stored) return key;
  try {
    return definitions.effective(stored).automation.name;
  } catch {
    return stored.slug;
  }
}

export async function silenceCandidates(definitions: DefinitionService): Promise<SilenceCandidate[]> {
  const out: SilenceCandidate[] = [];
  for (const s of await definitions.all()) {
    try {
      const e = definitions.effective(s);
      out.push({ key: String(s.id), name: e.automation.name, automation: e.automation, created: s.created });
    } catch {
      // An automation that no longer validates cannot run either; its failed runs alert instead.
    }
  }
  return out;
}

/** One JSON line per run event on standard output (runs.md); ids, keys and outcomes only, never a secret. */
export function attachRunLog(queue: RunQueue, logger: Logger): void {
  queue.on("queued", (run) => logger.info({ event: "run_queued", run_id: run.id, automation: run.automation, account: run.account, mode: run.mode, trigger: run.trigger }, "run queued"));
  queue.on("started", (run) => logger.info({ event: "run_started", run_id: run.id, automation: run.automation, mode: run.mode, diff: run.diff }, "run started"));
  queue.on("skipped", ({ run, reason }) => logger.info({ event: "run_skipped", automation: run.automation, fire_time: run.fireTime ?? null, reason }, "scheduled run skipped"));
  queue.on("finished", (e) => {
    // What ended a run is in its line, so a log watcher needs no API call to see why; the record's error is masked.
    const thrown = e.error === null || e.error === undefined ? null : { code: "internal", message: maskSecrets(String((e.error as Error).message ?? e.error)) };
    const failure = e.failure ?? thrown;
    const fields = { event: "run_finished", run_id: e.run.id, automation: e.run.automation, mode: e.run.mode, outcome: e.outcome, started: e.started, reason: e.reason, duration_ms: e.durationMs, ...(failure ? { error_code: failure.code, error_message: failure.message } : {}), ...(e.note ? { note: e.note } : {}) };
    if (e.outcome === "failed") logger.error(fields, "run finished");
    else if (e.outcome === "partial" || e.outcome === "canceled") logger.warn(fields, "run finished");
    else logger.info(fields, "run finished");
  });
}

/**
 * A fresh machine's first start (README, "First session"): the sample catalogue
 * into the embedded service, the sample storage files into the account's
 * storage root, and the definitions of the automations folder.
 */
export class SampleSetup {
  constructor(
    private readonly settings: Settings,
    private readonly db: DaemonDb,
    private readonly logger: Logger,
  ) {}

  async seedProducts(): Promise<void> {
    const folder = this.settings.automations;
    if (!folder || !this.settings.embedded) return;
    const loaded = await seedSampleProducts(this.db, this.settings.dataDir, path.join(folder, "products.csv"), this.logger);
    if (loaded > 0) this.logger.info({ event: "samples_products", products: loaded }, "sample products loaded into the embedded service");
  }

  async loadAutomations(definitions: DefinitionService, account: string): Promise<void> {
    const folder = this.settings.automations;
    if (!folder) return;
    const local = !/^(s3|sftp):\/\//.test(this.settings.storage);
    if (this.settings.embedded && local) {
      const copied = await copySampleStorage(path.join(folder, "storage"), this.settings.storage, account);
      if (copied.length > 0) this.logger.info({ event: "samples_storage", files: copied }, "sample feeds copied into the account's storage");
    }
    const report = await loadDefinitionsFolder(definitions, account, folder, this.logger);
    this.logger.info({ event: "definitions_loaded", folder, account, ...report, failed: report.failed.length }, "automation definitions loaded");
  }
}
