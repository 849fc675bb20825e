import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Settings } from "../config.js";
import { loadAutomationFile, type Automation } from "../definition/index.js";
import { ConveyorError } from "../errors.js";

/**
 * `<file-or-id>` of the CLI: a definition file, or the slug of a definition
 * in the automations folder (`CONVEYOR_AUTOMATIONS`). The slug is the
 * automation's key for its state (snapshots, ledger, runs).
 */
export async function loadAutomationArg(arg: string, settings: Settings): Promise<{ key: string; automation: Automation; file: string }> {
  if (existsSync(arg)) {
    const automation = await loadAutomationFile(arg);
    return { key: automation.slug, automation, file: path.resolve(arg) };
  }
  const folder = settings.automations;
  if (folder && existsSync(folder)) {
    for (const name of (await readdir(folder)).filter((n) => n.endsWith(".json")).sort()) {
      const file = path.join(folder, name);
      const automation = await loadAutomationFile(file).catch(() => undefined);
      if (automation?.slug === arg) return { key: automation.slug, automation, file };
    }
  }
  throw new ConveyorError("definition_not_found", `no definition file "${arg}"${folder ? ` and no automation with slug "${arg}" in ${folder}` : ""}`, {
    hint: "Give the path of a definition file, or the slug of one in the automations folder (CONVEYOR_AUTOMATIONS).",
  });
}
