import type { Command } from "commander";
import { isEncrypted, loadAutomationFile, loadSecretKey, maskAutomation, resolveAutomation } from "../definition/index.js";
import { maskDeep } from "../secrets.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";
import { applyParams, collect } from "./params.js";
import { pointerLines, shownPointers } from "./show-pointers.js";

/**
 * `conveyor show <file>`: the definition as a run would see it (normalized,
 * parameters and tokens resolved) and as anyone may read it (masked twice: by
 * field with maskAutomation, then by value and key with maskDeep). An http
 * import that keeps pointers also shows their current and initial values.
 */

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
        const pointers = await shownPointers(file, automation, settingsFrom(cmd));
        if (json) process.stdout.write(`${JSON.stringify(pointers ? { ...safe, pointers: pointers.pointers } : safe)}\n`);
        else process.stdout.write(`${JSON.stringify(safe, null, 2)}\n${pointers ? pointerLines(pointers) : ""}`);
        return EXIT.ok;
      });
    });
}
