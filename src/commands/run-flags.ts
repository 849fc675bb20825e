import { ConveyorError } from "../errors.js";

/** The run flags the CLI shares with the API's run routes. */
export const CLI_RUN_FLAGS = ["debug", "diff", "force", "notify"] as const;

const GIVEN = new RegExp(`^--(${CLI_RUN_FLAGS.join("|")})=(.*)$`, "s");

/**
 * The command line with `--debug=<value>` (and its siblings) settled before
 * commander reads it: `1`/`true` become the bare flag, `0`/`false` drop it, so
 * a script can pass a variable; anything else is a usage error naming the flag,
 * raised before anything runs. Commander alone calls `--debug=maybe` an unknown
 * option, which does not say what to write instead.
 */
export function strictRunFlagArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  let options = true;
  for (const arg of argv) {
    if (arg === "--") options = false;
    const given = options ? GIVEN.exec(arg) : null;
    if (!given) {
      out.push(arg);
      continue;
    }
    const [, name = "", value = ""] = given;
    const lower = value.toLowerCase();
    if (lower === "1" || lower === "true") out.push(`--${name}`);
    else if (lower !== "0" && lower !== "false") {
      const shown = value === "" ? "an empty value" : JSON.stringify(value);
      throw new ConveyorError("usage", `--${name} takes 1, 0, true or false after "=", not ${shown}; nothing was run`, {
        hint: `Write --${name} alone to turn it on and leave it out to turn it off${name === "debug" ? " (a live run)" : ""}; --${name}=1 and --${name}=0 set it from a variable.`,
      });
    }
  }
  return out;
}

/** Said after commander's "too many arguments" when a run flag seems to have been given its value after a space. */
export function runFlagValueHint(argv: readonly string[]): string | null {
  const flags: readonly string[] = CLI_RUN_FLAGS.map((name) => `--${name}`);
  const at = argv.findIndex((arg, i) => flags.includes(arg) && argv[i + 1] !== undefined && !String(argv[i + 1]).startsWith("-"));
  if (at < 0) return null;
  const flag = String(argv[at]);
  return `${flag} takes no separate value (${JSON.stringify(argv[at + 1])} was read as another argument): write ${flag} alone to turn it on, or ${flag}=1 / ${flag}=0; nothing was run`;
}
