import type { Automation, Problem } from "./types.js";

/**
 * What a valid definition does that its author may not mean: said by
 * `conveyor check` and logged by each run, never refused.
 */
export function definitionWarnings(automation: Automation): Problem[] {
  const warnings: Problem[] = [];
  if (!automation.connection) {
    // automations.md: `connection` is required "except for a run fed by a local file".
    warnings.push({
      path: "connection",
      message: automation.action === "import" ? "no connection: only conveyor run --file can feed this import, and its scheduled runs fail" : "no connection: a live run has nowhere to deliver the file",
      allowed: "a connection of type ftp, ftps, sftp, sdsftp, sds3, http or email",
    });
  }
  if (automation.action === "export" && automation.type === "orders") {
    for (const [i, config] of automation.file_configs.entries()) {
      if ((config.search ?? "").trim() !== "") continue;
      // automations.md, `search`: an order export without one re-sends every order.
      warnings.push({
        path: `file_configs[${i}].search`,
        message: "no search: every order is exported on every run",
        allowed: 'a search that narrows the orders, e.g. status:=READY archived:=0, or date:>"-1 day"',
      });
    }
  }
  return warnings;
}
