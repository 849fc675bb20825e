import type { Command } from "commander";
import Table from "cli-table3";
import { runJson } from "../cli-output/summary.js";
import { automationRuns } from "./automation-runs.js";
import { openStore, type RunRecord } from "../state/index.js";
import { EXIT, runCommand, settingsFrom } from "./context.js";
import { ConveyorError } from "../errors.js";

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
          runs = automation === undefined ? await store.listRuns({ limit }) : await automationRuns(settings, store, automation, limit);
        } finally {
          await store.close();
        }
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
          table.push([r.id, r.automation, `${r.mode}${r.diff ? " diff" : ""}`, triggerText(r), r.outcome ?? "running", r.started, String(c.rows), `+${c.create} ~${c.update} -${c.remove}`]);
        }
        process.stdout.write(`${table.toString()}\n`);
        return EXIT.ok;
      });
    });
}

/** `event (3)`: an event run says how many events it took; their ids are in `--json` and the API. */
export function triggerText(run: Pick<RunRecord, "trigger" | "events">): string {
  return run.events ? `${run.trigger} (${run.events.length})` : run.trigger;
}
