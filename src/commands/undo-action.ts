import type { Command } from "commander";
import { runJson, runSummary } from "../cli-output/summary.js";
import { progressView } from "../cli-output/progress.js";
import { ConveyorError } from "../errors.js";
import { createLogger } from "../log.js";
import { runAutomation } from "../pipeline/run.js";
import { newRunId } from "../pipeline/recorder.js";
import type { HeldLock } from "../state/index.js";
import { openWorker } from "../worker.js";
import { runCommand } from "./context.js";
import { exitCodeFor } from "./run-action.js";
import { lockForCli } from "./run-lock.js";
import { runAccount, targetOf, type RunAccount } from "./run-target.js";
import { mailAfterRun } from "./run-mails.js";
import { settingsFrom } from "./settings-from.js";

interface UndoFlags {
  debug?: boolean;
  force?: boolean;
  notify?: boolean;
  email?: string;
  identifier?: string[];
  field?: string[];
  wait?: boolean;
  automation?: string;
  json?: boolean;
  verbose?: boolean;
}

/** What `conveyor undo` does; undo.ts declares its arguments and options. */
export async function undoAction(runId: string, flags: UndoFlags, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const logger = createLogger({ level: flags.verbose ? "debug" : settings.logLevel === "info" ? "warn" : settings.logLevel });
    if (flags.email !== undefined && !flags.notify) {
      throw new ConveyorError("usage", `--email ${flags.email} is where --notify sends the summary, and --notify is not set`, { hint: "Add --notify to mail the summary, or leave out --email." });
    }
    const worker = await openWorker(settings, logger);
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    let lock: HeldLock | undefined;
    let account: RunAccount | undefined;
    const progress = progressView(!flags.json);
    try {
      const original = await worker.env.store.getRun(runId);
      if (!original) throw new ConveyorError("not_found", `run ${runId} does not exist (or was deleted by run_retention with its undo journal)`, { hint: "List the runs with conveyor runs <automation>." });
      const target = await targetOf(flags.automation ?? original.automation, settings, worker.env.store, worker.env.account, logger);
      account = await runAccount(worker, target, settings, logger);
      const id = newRunId(new Date());
      lock = await lockForCli(worker.env.store, settings, { key: target.key, arg: original.automation, runId: id, wait: Boolean(flags.wait), signal: controller.signal, say: (line) => process.stderr.write(`conveyor: ${line}\n`) });
      const run = await runAutomation(account.env, {
        id,
        key: target.key,
        automation: target.automation,
        mode: flags.debug ? "debug" : "prod",
        trigger: "manual",
        diff: false,
        force: Boolean(flags.force),
        notify: Boolean(flags.notify),
        email: flags.email ?? null,
        signal: controller.signal,
        verbose: Boolean(flags.verbose),
        progress: (p) => progress.update(p),
        undo: { of: runId, identifiers: flags.identifier ?? [], fields: flags.field ?? [] },
      });
      await lock.release();
      progress.stop();
      await mailAfterRun(settings, worker.env.store, logger, run, target.automation.name);
      if (flags.json) process.stdout.write(`${JSON.stringify(runJson(run))}\n`);
      else {
        process.stdout.write(runSummary(run));
        if (run.conflicts) process.stdout.write(`${run.conflicts} field(s) changed since run ${runId} were left alone: see conflicts.csv (conveyor debug-files ${run.id}); --force restores them\n`);
      }
      return exitCodeFor(run.outcome, run.error?.code);
    } finally {
      progress.stop();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      await lock?.release();
      await account?.close();
      await worker.close();
    }
  });
}
