import type { Command } from "commander";
import { lazyAction } from "./lazy-action.js";

/**
 * `conveyor reload`: sends SIGHUP to the daemon of this data folder only, by
 * the pid it wrote at start, where `pkill -HUP -f 'cli.js daemon'` signalled
 * every daemon on the machine. A signal rather than an API route: the reload
 * reads the catalogue every account shares, and an account's API token should
 * not be enough to make the daemon re-read its folder.
 */
export function register(program: Command): void {
  program
    .command("reload")
    .description("make the daemon of this data folder read the published catalogue again (SIGHUP to the pid in <data folder>/daemon.pid)")
    .option("--json", "print the pid signalled as JSON")
    .action(lazyAction(async () => (await import("./reload-action.js")).reloadAction));
}
