import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/** `conveyor check <files...>`: validates definitions and lists every problem of every file. */
export function register(program: Command): void {
  program
    .command("check")
    .description("validate automation definitions: every problem of every file, with its field path and what is allowed")
    .argument("<files...>", "definition files (JSON)")
    .option("--json", "print {files: [{file, ok, problems: [{path, message, allowed}], warnings: [same]}]}")
    .addHelpText("after", "\nExit code: 0 when every file is valid, 2 when any is not.\nExample: conveyor check samples/*.json")
    .action(lazyAction(async () => (await import("./check-action.js")).checkAction));
}
