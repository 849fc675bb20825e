import type { Command } from "commander";
import { loadSettings, type Settings } from "../config.js";
import { SETTINGS } from "../settings-table.js";

/**
 * The settings of a command's run, apart from context.ts: the parser (zod)
 * loads with a command's action, not with the command line.
 */

function flagKey(flag: string): string {
  // "--data-dir" -> "dataDir", the property commander gives it.
  return flag.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Settings from defaults, the config file, the environment and the flags given to any level of the command. */
export function settingsFrom(command: Command): Settings {
  const opts = command.optsWithGlobals<Record<string, string | undefined>>();
  const flags: Record<string, string> = {};
  for (const spec of SETTINGS) {
    const value = opts[flagKey(spec.flag)];
    if (value !== undefined) flags[spec.key] = value;
  }
  return loadSettings({ configFile: opts.config, flags });
}
