import type { Command } from "commander";
import { isEncrypted, loadAutomationFile, loadSecretKey, maskAutomation, resolveAutomation, type Automation } from "../definition/index.js";
import { ConveyorError } from "../errors.js";
import { maskDeep } from "../secrets.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";

/**
 * `conveyor show <file>`: the definition as a run would see it (normalized,
 * parameters and tokens resolved) and as anyone may read it (masked twice: by
 * field with maskAutomation, then by value and key with maskDeep).
 */

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `--param "sftp password=s3cret"`: the first `=` splits, so names may hold spaces and values may hold `=`. */
export function applyParams(a: Automation, params: readonly string[]): Automation {
  const parameters = a.parameters.map((p) => ({ ...p }));
  for (const given of params) {
    const eq = given.indexOf("=");
    if (eq <= 0) throw new ConveyorError("usage", `--param "${given}" is not name=value`, { hint: 'e.g. --param "sftp host=127.0.0.1"' });
    const name = given.slice(0, eq).trim();
    const target = parameters.find((p) => p.name === name);
    if (!target) {
      throw new ConveyorError("usage", `--param "${name}": the automation has no such parameter`, {
        hint: parameters.length ? `its parameters: ${parameters.map((p) => `"${p.name}"`).join(", ")}` : "it defines no parameters",
      });
    }
    target.value = given.slice(eq + 1);
  }
  return { ...a, parameters };
}

export function register(program: Command): void {
  program
    .command("show")
    .description("print the normalized definition with parameters resolved and secrets masked")
    .argument("<file>", "definition file (JSON)")
    .option("--param <name=value>", "set a parameter for this view (repeatable; names may contain spaces)", collect, [])
    .option("--unresolved", "show the normalized definition without resolving parameters and tokens")
    .option("--json", "print one line of JSON (errors as {error})")
    .addHelpText("after", '\nExample: conveyor show samples/supplier-stock-sftp.json --param "sftp host=127.0.0.1"')
    .action(async (file: string, opts: { param: string[]; unresolved?: boolean; json?: boolean }, cmd: Command) => {
      const json = opts.json === true;
      await runCommand(json, async () => {
        const automation = applyParams(await loadAutomationFile(file), opts.param);
        let shown = automation;
        if (!opts.unresolved) {
          // The key file is only created when a value needs it: `show` should not leave files behind otherwise.
          const secretKey = automation.parameters.some((p) => isEncrypted(p.value)) ? loadSecretKey(settingsFrom(cmd)) : undefined;
          shown = resolveAutomation(automation, { runId: "show", now: new Date(), ...(secretKey ? { secretKey } : {}) });
        }
        const safe = maskDeep(maskAutomation(shown));
        process.stdout.write(json ? `${JSON.stringify(safe)}\n` : `${JSON.stringify(safe, null, 2)}\n`);
        return EXIT.ok;
      });
    });
}
