import type { Automation } from "../definition/index.js";
import { ConveyorError } from "../errors.js";

/** `--param name=value` of the commands that load a definition (run, show, ls). */

/** Commander's accumulator for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
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
