import { pipeline } from "node:stream/promises";
import type { Command } from "commander";
import { ConveyorError } from "../errors.js";
import { isDebugFileName, openStore } from "../state/index.js";
import { EXIT, runCommand } from "./context.js";
import { isClosedPipe } from "./stdout.js";
import { settingsFrom } from "./settings-from.js";

/** What `conveyor debug-files` does; debug-files.ts declares its arguments and options. */
export async function debugFilesAction(runId: string, name: string | undefined, flags: { json?: boolean }, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const settings = settingsFrom(command);
    const store = await openStore(settings);
    try {
      const run = await store.getRun(runId);
      if (!run) throw new ConveyorError("usage", `no run ${runId}`, { hint: "`conveyor runs` lists the recorded runs" });
      if (name === undefined) {
        if (flags.json) process.stdout.write(`${JSON.stringify(run.debug_files)}\n`);
        else process.stdout.write(run.debug_files.length ? `${run.debug_files.join("\n")}\n` : `run ${runId} has no debug files\n`);
        return EXIT.ok;
      }
      if (!isDebugFileName(name)) throw new ConveyorError("usage", `debug file name ${JSON.stringify(name)} is not allowed: give a name from the run's debug_files`);
      // Through the store: on PostgreSQL the run may have been made by another daemon's machine.
      const file = await store.getDebugFile(runId, name);
      if (!file) throw new ConveyorError("usage", `run ${runId} has no debug file "${name}"; it has: ${run.debug_files.join(", ") || "none"}`);
      await pipeline(file.open(), process.stdout, { end: false }).catch((err: unknown) => {
        // `| head`: the reader has what it wanted.
        if (!isClosedPipe(err)) throw err;
      });
      return EXIT.ok;
    } finally {
      await store.close();
    }
  });
}
