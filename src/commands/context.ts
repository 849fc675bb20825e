import type { Command, CommanderError } from "commander";
import { SETTINGS } from "../settings-table.js";
import { ConveyorError, toConveyorError } from "../errors.js";
import { maskSecrets } from "../secrets.js";
import { runFlagValueHint } from "./run-flags.js";

/** Exit codes of the spec (runs.md): scripts rely on them. */
export const EXIT = { ok: 0, failed: 1, usage: 2, partial: 3 } as const;

/** Adds `--config` and one flag per setting to the program; they work before or after the command. */
export function addSettingsFlags(program: Command): void {
  program.option("--config <file>", "settings file (default: ./conveyor.config.json when present)");
  for (const spec of SETTINGS) {
    program.option(`${spec.flag} <value>`, `${spec.describe} (env ${spec.env}; default ${spec.default})`);
  }
}

/** Runs a command body; turns errors into a readable message (or JSON) and an exit code. */
export async function runCommand(json: boolean, body: () => Promise<number>): Promise<never> {
  let code: number;
  try {
    code = await body();
  } catch (raw) {
    const err = toConveyorError(raw);
    if (json) process.stdout.write(`${JSON.stringify({ error: err.toJSON() })}\n`);
    else process.stderr.write(`conveyor: ${maskSecrets(err.describe())}\n`);
    code = usageCodes.has(err.code) ? EXIT.usage : EXIT.failed;
  }
  process.exit(code);
}

/** Errors the user fixes in the command, the settings or the definition: exit 2. */
export function isUsageError(code: string): boolean {
  return (usageCodes as ReadonlySet<string>).has(code);
}

const usageCodes = new Set<ConveyorError["code"]>(["usage", "settings_invalid", "definition_invalid", "definition_not_found", "parameter_missing", "placeholder_unknown", "search_syntax"]);

/**
 * Commander exits 1 on an unknown flag or a missing argument; runs.md gives
 * usage errors exit code 2, which scripts tell apart from a failed run.
 */
export function usageExit(err: CommanderError): never {
  const hint = err.code === "commander.excessArguments" ? runFlagValueHint(process.argv.slice(2)) : null;
  if (hint) process.stderr.write(`${hint}\n`);
  process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage);
}
