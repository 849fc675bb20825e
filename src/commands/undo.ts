import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";
import { collect } from "./params.js";

/**
 * `conveyor undo <run-id>`: a run of the run's automation that takes back
 * what the run changed (issue 33). It is a run like any other: its own record,
 * plan, debug files, logs, notification; only the plan comes from the journal.
 */
export function register(program: Command): void {
  program
    .command("undo")
    .description("take back what a live product import changed: restore the fields it set, remove what it created, relist or re-create what it ended or deleted")
    .argument("<run-id>", "the live run to undo (conveyor runs <automation> lists them)")
    .option("--debug", "plan the undo without changing anything: plan.csv shows each field going back, conflicts.csv what was changed since")
    .option("--force", "restore fields changed since the run as well, and run past the remove_limit guard")
    .option("--notify", "send a summary by e-mail to --email (or the default notification address), as a run does")
    .option("--email <address>", "where --notify sends the summary")
    .option("--identifier <value>", "undo only this record (repeatable)", collect, [])
    .option("--field <name>", "restore only this field (repeatable)", collect, [])
    .option("--automation <file-or-id>", "the definition to undo with, when the run's automation is a definition file outside the automations folder (default: the run's automation)")
    .option("--wait", "when a run of the automation is running, wait for it to end instead of refusing")
    .option("--json", "print the undo's run record as one JSON object on standard output, and nothing else there")
    .option("--verbose", "log each stage to standard error")
    .addHelpText("after", "\nOrder imports and exports cannot be undone: what they sent on (a shipment to a carrier, a file to a partner) cannot be recalled.\nExit codes as conveyor run: 0 success or nothing to undo, 1 failed or stopped by a guard, 2 usage, 3 partial.")
    .action(lazyAction(async () => (await import("./undo-action.js")).undoAction));
}
