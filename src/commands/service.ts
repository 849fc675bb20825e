import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/**
 * `conveyor service [--port N]`: the embedded commerce service alone, in the
 * foreground, on CONVEYOR_SERVICE_LISTEN (the daemon's stable address) and the
 * settings' data folder; prints its base URL and credentials, stops on Ctrl-C. `conveyor service load <file.csv>` fills its
 * catalogue from a CSV with a guid column.
 */
export function register(program: Command): void {
  const service = program
    .command("service")
    .description("run the embedded commerce service alone (prints its URL, API user and token)")
    .option("--port <n>", "port to listen on (default: the port of CONVEYOR_SERVICE_LISTEN, 8081; 0: any free port)")
    .option("--json", "print the URL and credentials as JSON")
    .action(lazyAction(async () => (await import("./service-action.js")).serviceAction));

  service
    .command("load <file>")
    .description("load products from a CSV with a guid column into the embedded service's data")
    .option("--json", "print the counts as JSON")
    .action(lazyAction(async () => (await import("./service-action.js")).loadAction));
}
