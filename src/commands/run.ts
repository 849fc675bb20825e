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
import { openDaemonDb } from "../daemon/daemon-db.js";
import { runAccount, targetOf, type RunAccount } from "./run-target.js";
import { lockForCli } from "./run-lock.js";
import { Notifier } from "../daemon/notify.js";
import { EXIT, isUsageError, runCommand, settingsFrom } from "./context.js";
import { applyParams, collect } from "./params.js";

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

export function register(program: Command): void {
  program
    .command("run")
    .description("run one automation now: fetch, read, map, plan, apply (or only plan with --debug)")
    .argument("<file-or-id>", "the id or slug of an automation in the state database, a definition file, or the slug of one in the automations folder")
    .option("--debug", "dry run: the whole pipeline with the same reads, nothing written; the debug files show what a live run would do")
    .option("--diff", "send only what changed since this automation's last successful live run")
    .option("--force", "run past the remove_limit, error_limit and change_limits guards (an empty feed still never removes)")
    .option("--notify", "send a summary by e-mail to --email (or the default notification address)")
    .option("--email <address>", "where --notify sends the summary")
    .option("--param <name=value>", "set a parameter for this run (repeatable; names may contain spaces)", collect, [])
    .option("--file <path>", "feed the import this local file instead of its connection (repeatable; each goes to the file configs whose name it matches; no ledger, no after_import)", collect, [])
    .option("--wait", "when a run of the automation is running (the daemon's or another conveyor run), wait for it to end instead of refusing")
    .option("--json", "print the run record as one JSON object on standard output, and nothing else there")
    .option("--verbose", "log each stage and protocol traces (secrets redacted) to standard error")
    .addHelpText(
      "after",
      "\nA definition file whose slug is an automation's in the state database runs under that automation's id, sharing its runs, snapshot and ledger.\nExit codes: 0 success or nothing to do, 1 failed, canceled, stopped by a guard or refused because the automation is running, 2 usage or definition error, 3 partial.",
    )
    .action(async (arg: string, flags: RunFlags, command: Command) => {
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
          // The same mails as a daemon run: the --notify summary, and the alert address on a failure.
          if (run.notify || (settings.alertEmail && run.outcome === "failed")) {
            const db = openDaemonDb(settings, worker.env.store);
            try {
              await new Notifier({ settings, store: worker.env.store, db, logger }).afterRun(run, automation.name);
            } finally {
              await db.close();
            }
          }
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
    });
}
