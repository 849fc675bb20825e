import { existsSync, statSync } from "node:fs";
import type { Command } from "commander";
import Table from "cli-table3";
import { runJson } from "../cli-output/summary.js";
import { openDaemonDb } from "../daemon/daemon-db.js";
import { openStore, type RunRecord, type StateStore } from "../state/index.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";
import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { loadAutomationFile } from "../definition/index.js";

/**
 * Runs of an automation stored in the state database are keyed by its id,
 * whoever started them (daemon, API or `conveyor run`); people remember
 * slugs, and a definition file names its slug. All three are accepted; a
 * slug also finds the runs of a file no stored automation has.
 */
async function automationKeys(settings: Settings, store: StateStore, arg: string): Promise<string[]> {
  const slug = existsSync(arg) && statSync(arg).isFile() ? (await loadAutomationFile(arg)).slug : arg;
  const keys = [slug];
  const db = openDaemonDb(settings, store);
  try {
    for (const a of await db.definitions.all()) if (a.slug === slug) keys.push(String(a.id));
  } finally {
    await db.close();
  }
  return keys;
}

export function register(program: Command): void {
  program
    .command("runs")
    .description("list run records, newest first (all automations, or one by id or slug)")
    .argument("[automation]", "the automation's id or slug, or its definition file")
    .option("--limit <n>", "at most this many runs", "20")
    .option("--json", "print one JSON array of run records")
    .action(async (automation: string | undefined, flags: { limit: string; json?: boolean }, command: Command) => {
      await runCommand(Boolean(flags.json), async () => {
        const settings = settingsFrom(command);
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new ConveyorError("usage", `--limit must be a whole number of at least 1, not ${flags.limit}`);
        const store = await openStore(settings);
        let runs: RunRecord[] = [];
        try {
          if (automation === undefined) runs = await store.listRuns({ limit });
          else for (const key of await automationKeys(settings, store, automation)) runs.push(...(await store.listRuns({ automation: key, limit })));
        } finally {
          await store.close();
        }
        runs = runs.sort((a, b) => (a.started < b.started ? 1 : -1)).slice(0, limit);
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(runs.map(runJson))}\n`);
          return EXIT.ok;
        }
        if (runs.length === 0) {
          process.stdout.write(automation === undefined ? "no runs recorded\n" : `no runs recorded for ${JSON.stringify(automation)} (an automation's id, slug or definition file key); \`conveyor runs\` lists every run\n`);
          return EXIT.ok;
        }
        const table = new Table({ head: ["run", "automation", "mode", "trigger", "outcome", "started", "rows", "changes"], style: { head: [], border: [] } });
        for (const r of runs) {
          const c = r.counts;
          table.push([r.id, r.automation, `${r.mode}${r.diff ? " diff" : ""}`, r.trigger, r.outcome ?? "running", r.started, String(c.rows), `+${c.create} ~${c.update} -${c.remove}`]);
        }
        process.stdout.write(`${table.toString()}\n`);
        return EXIT.ok;
      });
    });
}
