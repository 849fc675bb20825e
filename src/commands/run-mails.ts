import type { Settings } from "../config.js";
import { openDaemonDb } from "../daemon/daemon-db.js";
import type { Logger } from "../log.js";
import type { RunRecord, StateStore } from "../state/index.js";

/**
 * The mails of a CLI run (or undo), the same as a daemon run's: the --notify
 * summary, and the alert address on a failure. The mailer (nodemailer) loads
 * only for a run that mails.
 */
export async function mailAfterRun(settings: Settings, store: StateStore, logger: Logger, run: RunRecord, name: string): Promise<void> {
  if (!run.notify && !(settings.alertEmail && run.outcome === "failed")) return;
  const { Notifier } = await import("../daemon/notify.js");
  const db = openDaemonDb(settings, store);
  try {
    await new Notifier({ settings, store, db, logger }).afterRun(run, name);
  } finally {
    await db.close();
  }
}
