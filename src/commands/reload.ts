import type { Command } from "commander";
import { pidFilePath, runningDaemonPid } from "../daemon/pid-file.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";

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
    .action(async (flags: { json?: boolean }, command: Command) => {
      await runCommand(Boolean(flags.json), async () => {
        const settings = settingsFrom(command);
        const pid = runningDaemonPid(settings.dataDir);
        process.kill(pid, "SIGHUP");
        if (flags.json) process.stdout.write(`${JSON.stringify({ pid, pid_file: pidFilePath(settings.dataDir), signal: "SIGHUP" })}\n`);
        else process.stdout.write(`sent SIGHUP to the daemon (pid ${pid}) of ${settings.dataDir}; it logs catalogue_reloaded once the catalogue is read\n`);
        return EXIT.ok;
      });
    });
}
