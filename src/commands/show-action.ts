import type { Command } from "commander";
import { isEncrypted, loadAutomationFile, loadSecretKey, maskAutomation, resolveAutomation } from "../definition/index.js";
import { maskDeep } from "../secrets.js";
import { EXIT, runCommand } from "./context.js";
import { applyParams } from "./params.js";
import { pointerLines, shownPointers } from "./show-pointers.js";
import { settingsFrom } from "./settings-from.js";

/** What `conveyor show` does; show.ts declares its arguments and options. */
export async function showAction(file: string, opts: { param: string[]; unresolved?: boolean; json?: boolean }, cmd: Command): Promise<void> {
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
}
