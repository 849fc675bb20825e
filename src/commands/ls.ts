import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";
import { collect } from "./params.js";

/**
 * `conveyor ls`: the "test connection" users expect. Connects with an
 * automation's connection, lists what each file config would pick and why
 * any other file is left out, and fails with the connector's error when it
 * cannot connect.
 */
export function register(program: Command): void {
  program
    .command("ls")
    .description("connect with an automation's connection and list what its file configs would pick, and why any file is left out")
    .argument("<file-or-id>", "the id or slug of an automation in the state database, a definition file, or the slug of one in the automations folder")
    .option("--param <name=value>", "set a parameter for this listing (repeatable; names may contain spaces)", collect, [])
    .option("--json", "print the listing as JSON")
    .option("--verbose", "protocol traces to standard error (passwords redacted)")
    .action(lazyAction(async () => (await import("./ls-action.js")).lsAction));
}
