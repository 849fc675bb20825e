import type { Command } from "commander";
import { runJson, runSummary } from "../cli-output/summary.js";
import { progressView } from "../cli-output/progress.js";
import { createLogger } from "../log.js";
import { formatDuration } from "../duration.js";
import { ConveyorError } from "../errors.js";
import { runAutomation } from "../pipeline/run.js";
import type { RunOutcome } from "../state/index.js";
import { openWorker } from "../worker.js";
import { newRunId } from "../pipeline/recorder.js";
import type { HeldLock } from "../state/index.js";
import { runAccount, targetOf, type RunAccount } from "./run-target.js";
import { lockForCli } from "./run-lock.js";
import { EXIT, isUsageError, runCommand } from "./context.js";
import { applyParams } from "./params.js";
import { mailAfterRun } from "./run-mails.js";
import { settingsFrom } from "./settings-from.js";

interface RunFlags {
  debug?: boolean;
  diff?: boolean;
  force?: boolean;
  notify?: boolean;
  wait?: boolean;
  email?: string;
  json?: boolean;
  verbose?: boolean;
  param?: string[];
  file?: string[];
}

/** `errorCode`: a run stopped by its definition (a parameter without a value, say) is a definition error, exit 2. */
export function exitCodeFor(outcome: RunOutcome | null, errorCode?: string): number {
  if (outcome === "success" || outcome === "nothing") return EXIT.ok;
  if (outcome === "failed" && errorCode !== undefined && isUsageError(errorCode)) return EXIT.usage;
  if (outcome === "partial") return EXIT.partial;
  return EXIT.failed;
}

/** What `conveyor run` does; run.ts declares its arguments and options. */
export async function runAction(arg: string, flags: RunFlags, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const logger = createLogger({ level: flags.verbose ? "debug" : settings.logLevel === "info" ? "warn" : settings.logLevel });
    if (flags.email !== undefined && !flags.notify) {
      throw new ConveyorError("usage", `--email ${flags.email} is where --notify sends the summary, and --notify is not set`, { hint: "Add --notify to mail the summary, or leave out --email." });
    }
    if (flags.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(flags.email)) {
      throw new ConveyorError("usage", `--email ${JSON.stringify(flags.email)} is not an e-mail address`, { hint: "Give one address, like buyer@shop.example." });
    }
    const worker = await openWorker(settings, logger);
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    let limit: NodeJS.Timeout | undefined;
    let lock: HeldLock | undefined;
    let account: RunAccount | undefined;
    const progress = progressView(!flags.json);
    try {
      const target = await targetOf(arg, settings, worker.env.store, worker.env.account, logger);
      if (target.notice) process.stderr.write(`conveyor: ${target.notice}\n`);
      const automation = applyParams(target.automation, flags.param ?? []);
      const localFiles = flags.file ?? [];
      if (localFiles.length > 0 && automation.action !== "import") {
        throw new ConveyorError("usage", "--file feeds an import; this automation is an export", { hint: "Run it without --file: an export delivers through its connection." });
      }
      account = await runAccount(worker, target, settings, logger);
      const id = newRunId(new Date());
      // A debug run takes the lock too: it reads the snapshot a live run rewrites, and the daemon's queue runs one run per automation whatever the mode.
      lock = await lockForCli(worker.env.store, settings, { key: target.key, arg, runId: id, wait: Boolean(flags.wait), signal: controller.signal, say: (line) => process.stderr.write(`conveyor: ${line}\n`) });
      // As in the daemon: a run started by cron and stuck on a hung server must end. The wait for the lock is not part of the run.
      limit = setTimeout(() => {
        controller.abort(new ConveyorError("canceled", `the run passed max_run_time (${formatDuration(settings.maxRunTimeMs)}) and was canceled`, { details: { reason: "max_run_time" }, hint: "raise --max-run-time (CONVEYOR_MAX_RUN_TIME) if the run needs longer" }));
      }, Math.min(settings.maxRunTimeMs, 2 ** 31 - 1));
      limit.unref();
      const run = await runAutomation(account.env, {
        id,
        key: target.key,
        automation,
        mode: flags.debug ? "debug" : "prod",
        trigger: "manual",
        diff: Boolean(flags.diff),
        force: Boolean(flags.force),
        notify: Boolean(flags.notify),
        email: flags.email ?? null,
        signal: controller.signal,
        verbose: Boolean(flags.verbose),
        progress: (p) => progress.update(p),
        ...(localFiles.length > 0 ? { localFiles } : {}),
      });
      await lock.release();
      progress.stop();
      await mailAfterRun(settings, worker.env.store, logger, run, automation.name);
      if (flags.json) process.stdout.write(`${JSON.stringify(runJson(run))}\n`);
      else process.stdout.write(runSummary(run));
      return exitCodeFor(run.outcome, run.error?.code);
    } finally {
      progress.stop();
      clearTimeout(limit);
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      await lock?.release();
      await account?.close();
      await worker.close();
    }
  });
}
