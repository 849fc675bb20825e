/**
 * The `conveyor` program: its commands and global flags. Loaded by cli.ts once
 * the runtime is known to be a supported one.
 */

import { Command } from "commander";
import { addSettingsFlags, runCommand, usageExit } from "./commands/context.js";
import { commands } from "./commands/index.js";
import { endQuietlyWhenStdoutCloses } from "./commands/stdout.js";
import { strictRunFlagArgs } from "./commands/run-flags.js";
import { tuneHeap } from "./memory.js";
import { privateUmask } from "./state/private-files.js";
import { versionText } from "./version.js";

tuneHeap();
// Before any command writes: the data folder, its databases and run files are the daemon user's alone.
privateUmask();
endQuietlyWhenStdoutCloses();

const program = new Command("conveyor")
  .description(
    "Conveyor: the automation engine worker of the commerce service. It runs import and export automations " +
      "between an account and ftp, sftp, http, e-mail or the service's storage: as a daemon, for one run now, " +
      "or as a dry run (--debug).",
  )
  .version(versionText(), "-V, --version", "print the version and the Node.js runtime it runs on")
  .showHelpAfterError("(run with --help for usage)")
  .configureHelp({ sortOptions: false, showGlobalOptions: true })
  // Set before the commands are added: each inherits it.
  .exitOverride(usageExit);

addSettingsFlags(program);
for (const register of commands) register(program);

// Before commander: a misspelled `--debug=` value must stop here, with its own message, before anything runs.
let argv: string[] = [];
try {
  argv = strictRunFlagArgs(process.argv);
} catch (err) {
  await runCommand(process.argv.includes("--json"), () => Promise.reject(err));
}
await program.parseAsync(argv);
