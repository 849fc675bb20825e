import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/**
 * `conveyor logs`: the log records a run wrote for each record it touched,
 * the same ones the daemon's `POST /v3/logs` answers, read from the state
 * store by the run's id (the seed's API counts job_id only beside another
 * search field; the store's `run` search has no such rule).
 */
export function register(program: Command): void {
  program
    .command("logs")
    .description("list the log records of a run (one per record it touched: the service's answer, or why it was skipped), newest first")
    .argument("<run-or-automation>", "a run id (conveyor runs lists them), or an automation's id or slug: the records of its newest runs")
    .option("--identifier <id>", "only the records with this identifier (repeatable, or comma-separated)", (value: string, previous: string[] = []) => [...previous, value])
    .option("--limit <n>", "at most this many log records, 1 to 1000", "50")
    .option("--json", "print one JSON array of log records (the shape POST /v3/logs answers with) and nothing else")
    .addHelpText(
      "after",
      [
        "",
        "Each record has: the service action (or skip), the identifier, the result (success, error, warning) and the",
        "message: the service's answer to an error, the reason for a skip, or the fields a success changed.",
        "Examples: conveyor logs r20261121T101500-3f9a1c --identifier SKU-1",
        "          conveyor logs supplier-stock --limit 200 --json",
      ].join("\n"),
    )
    .action(lazyAction(async () => (await import("./logs-action.js")).logsAction));
}
