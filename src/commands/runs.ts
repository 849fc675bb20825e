import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

export function register(program: Command): void {
  program
    .command("runs")
    .description("list run records, newest first (all automations, or one by id or slug)")
    .argument("[automation]", "the automation's id or slug, or its definition file")
    .option("--limit <n>", "at most this many runs", "20")
    .option("--json", "print one JSON array of run records")
    .action(lazyAction(async () => (await import("./runs-action.js")).runsAction));
}
