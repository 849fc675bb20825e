import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/** How long a first SIGTERM lets running runs finish before they are canceled. */
const DEFAULT_GRACE_MS = 30_000;

export function register(program: Command): void {
  program
    .command("daemon")
    .description("serve the automations API, schedule and run the automations (the embedded service and the samples by default)")
    .option("--grace <seconds>", "on SIGTERM, how long running runs may finish before they are canceled", String(DEFAULT_GRACE_MS / 1000))
    .option("--show-token", "print the generated API token in the start banner (it is printed unasked only on the first start)")
    .addHelpText(
      "after",
      "\nA first SIGTERM or SIGINT stops scheduling and lets running runs finish for --grace seconds; a second one cancels them at once.\n" +
        "SIGHUP (`conveyor reload`, which signals the pid in <data folder>/daemon.pid) reads the published catalogue (<CONVEYOR_AUTOMATIONS>/published/*.json) again without a restart.",
    )
    .action(lazyAction(async () => (await import("./daemon-action.js")).daemonAction));
}
