import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

export function register(program: Command): void {
  program
    .command("debug-files")
    .description("list a run's debug files, or print one (summary.json, plan.csv, bulk-1.csv, errors.csv, records.csv, source/…)")
    .argument("<run-id>", "the run's id (conveyor runs lists them)")
    .argument("[name]", "the file to print")
    .option("--json", "list as a JSON array")
    .action(lazyAction(async () => (await import("./debug-files-action.js")).debugFilesAction));
}
