import type { Command } from "commander";
import { pidFilePath, runningDaemonPid } from "../daemon/pid-file.js";
import { EXIT, runCommand } from "./context.js";
import { settingsFrom } from "./settings-from.js";

/** What `conveyor reload` does; reload.ts declares its arguments and options. */
export async function reloadAction(flags: { json?: boolean }, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const pid = runningDaemonPid(settings.dataDir);
    process.kill(pid, "SIGHUP");
    if (flags.json) process.stdout.write(`${JSON.stringify({ pid, pid_file: pidFilePath(settings.dataDir), signal: "SIGHUP" })}\n`);
    else process.stdout.write(`sent SIGHUP to the daemon (pid ${pid}) of ${settings.dataDir}; it logs catalogue_reloaded once the catalogue is read\n`);
    return EXIT.ok;
  });
}
