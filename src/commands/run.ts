import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";
import { collect } from "./params.js";

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
    .action(lazyAction(async () => (await import("./run-action.js")).runAction));
}
