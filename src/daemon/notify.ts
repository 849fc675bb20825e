import { senderOf, smtpTransport, smtpUrlRequired } from "../../connectors/smtp-pool.js";
import type { Settings } from "../config.js";
import type { Automation } from "../definition/index.js";
import { ConveyorError, toConveyorError } from "../errors.js";
import type { Logger } from "../log.js";
import { maskSecrets } from "../secrets.js";
import type { RunRecord, StateStore } from "../state/index.js";
import type { DaemonDb } from "./daemon-db.js";
import type { Metrics } from "./metrics.js";
import { failedAlert, repeatedAlert, silenceAlert, summaryMessage, type MailMessage } from "./notify-messages.js";

export interface SilenceCandidate {
  key: string;
  name: string;
  automation: Automation;
  /** When the daemon first knew the automation: silence is counted from here when no run ever found a file. */
  created: string;
}

/**
 * Notifications (runs.md): the `notify` summary to the run's `email` or the
 * default address, and to `alert_email` a failed run, `alert_after` failures
 * in a row, and a `select: new` feed silent for `silence_alert`. A mail that
 * cannot be sent never fails the run or the daemon: it becomes a
 * `notify_failed` note on the run record and a log line.
 */
export class Notifier {
  constructor(
    private readonly options: {
      settings: Settings;
      store: StateStore;
      db: DaemonDb;
      logger: Logger;
      metrics?: Metrics;
      now?: () => Date;
    },
  ) {}

  async afterRun(run: RunRecord, name: string): Promise<void> {
    const { settings } = this.options;
    if (run.notify) {
      const to = run.email ?? settings.notifyEmail;
      try {
        if (!to) throw new ConveyorError("notify_failed", "notify was asked for but there is no address: give email= on the run, or set CONVEYOR_NOTIFY_EMAIL");
        await this.send("summary", await summaryMessage(run, name, to, settings.dataDir));
      } catch (err) {
        await this.recordFailure(run, err);
      }
    }
    if (!settings.alertEmail || run.mode !== "prod" || run.outcome !== "failed") return;
    try {
      await this.send("failed", failedAlert(run, name, settings.alertEmail));
      const window = await this.options.store.listRuns({ automation: run.automation, mode: "prod", limit: settings.alertAfter + 1 });
      const finished = window.filter((r) => r.finished !== null);
      const streak = finished.slice(0, settings.alertAfter).every((r) => r.outcome === "failed") && finished.length >= settings.alertAfter;
      // Exactly the alert_after-th failure: the run before the streak did not fail (or there was none).
      const first = finished.length === settings.alertAfter || finished[settings.alertAfter]?.outcome !== "failed";
      if (streak && first) await this.send("repeated", repeatedAlert(run, name, settings.alertEmail, settings.alertAfter));
    } catch (err) {
      this.options.logger.error({ run_id: run.id, automation: run.automation, err: maskSecrets(toConveyorError(err).message) }, "alert mail not sent");
    }
  }

  /** One alert per silence: the ref is the time the feed was last seen, so a new file re-arms it. */
  async checkSilence(candidates: readonly SilenceCandidate[]): Promise<number> {
    const { settings, store, db } = this.options;
    const limitMs = settings.silenceAlertMs;
    if (!limitMs || !settings.alertEmail) return 0;
    const now = (this.options.now?.() ?? new Date()).getTime();
    let sent = 0;
    for (const c of candidates) {
      const a = c.automation;
      if (a.action !== "import" || !a.active || a.draft || !a.file_configs.some((f) => f.select === "new")) continue;
      const runs = await store.listRuns({ automation: c.key, mode: "prod", limit: 500 });
      const lastFound = runs.find((r) => r.files.length > 0);
      const since = lastFound?.started ?? c.created;
      if (now - Date.parse(since) < limitMs) continue;
      if ((await db.alertRef(c.key, "silence")) === since) continue;
      try {
        await this.send("silence", silenceAlert(c.key, c.name, settings.alertEmail, since, Math.round(limitMs / 3600_000)));
        await db.setAlert(c.key, "silence", since, new Date(now).toISOString());
        sent++;
      } catch (err) {
        this.options.logger.error({ automation: c.key, err: maskSecrets(toConveyorError(err).message) }, "silence alert not sent");
      }
    }
    return sent;
  }

  private async send(kind: string, message: MailMessage): Promise<void> {
    const { settings, logger, metrics } = this.options;
    try {
      const url = smtpUrlRequired(settings.smtpUrl);
      await smtpTransport(url, logger).sendMail({ from: senderOf(url), ...message });
      metrics?.observeNotification(kind, true);
      logger.info({ event: "mail_sent", kind, to: message.to }, "notification sent");
    } catch (err) {
      metrics?.observeNotification(kind, false);
      throw err;
    }
  }

  private async recordFailure(run: RunRecord, raw: unknown): Promise<void> {
    const err = toConveyorError(raw, "notify_failed");
    const message = maskSecrets(`the notification could not be sent: ${err.message}${err.hint ? ` (${err.hint})` : ""}`);
    this.options.logger.error({ event: "notify_failed", run_id: run.id, automation: run.automation, err: message }, "notification not sent");
    // The run's own error stays first; the notification problem is added to it, never replaces it.
    const error = run.error ? { ...run.error, message: `${run.error.message}; ${message}` } : { code: "notify_failed", message };
    await this.options.store.updateRun(run.id, { error }).catch(() => undefined);
    run.error = error;
  }
}
