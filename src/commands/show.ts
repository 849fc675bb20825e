import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";
import { collect } from "./params.js";

/**
 * `conveyor show <file>`: the definition as a run would see it (normalized,
 * parameters and tokens resolved) and as anyone may read it (masked twice: by
 * field with maskAutomation, then by value and key with maskDeep). An http
 * import that keeps pointers also shows their current and initial values.
 */
export function register(program: Command): void {
  program
    .command("show")
    .description("print the normalized definition with parameters resolved and secrets masked")
    .argument("<file>", "definition file (JSON)")
    .option("--param <name=value>", "set a parameter for this view (repeatable; names may contain spaces)", collect, [])
    .option("--unresolved", "show the normalized definition without resolving parameters and tokens")
    .option("--json", "print one line of JSON (errors as {error})")
    .addHelpText("after", '\nExample: conveyor show samples/supplier-stock-sftp.json --param "sftp host=127.0.0.1"')
    .action(lazyAction(async () => (await import("./show-action.js")).showAction));
}
