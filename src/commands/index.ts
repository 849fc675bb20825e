import type { Command } from "commander";
import { register as service } from "./service.js";
import { register as check } from "./check.js";
import { register as show } from "./show.js";
import { register as run } from "./run.js";
import { register as ls } from "./ls.js";
import { register as daemon } from "./daemon.js";
import { register as accounts } from "./accounts.js";
import { register as runs } from "./runs.js";
import { register as debugFiles } from "./debug-files.js";
import { register as reload } from "./reload.js";
import { register as logs } from "./logs.js";
import { register as undo } from "./undo.js";

/**
 * Every command registers itself here: one file per command under
 * src/commands/, one line in this list.
 */
export type Register = (program: Command) => void;

export const commands: Register[] = [service, check, show, run, ls, daemon, accounts, runs, debugFiles, logs, reload, undo];
