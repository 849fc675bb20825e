import type { Command } from "commander";
import Table from "cli-table3";
import type { Settings } from "../config.js";
import { ConveyorError } from "../errors.js";
import { count } from "../plural.js";
import { maskSecrets } from "../secrets.js";
import { openStore, type LogRecord, type RunRecord, type StateStore } from "../state/index.js";
import { automationRuns } from "./automation-runs.js";
import { EXIT, runCommand } from "./context.js";
import { settingsFrom } from "./settings-from.js";

/** The most --limit takes; logs.ts says it in the option's help. */
const MAX_LIMIT = 1000;
/** How many of an automation's runs are looked through, newest first, to fill --limit. */
const RUNS_SEARCHED = 20;

interface LogsFlags {
  identifier?: string[];
  limit: string;
  json?: boolean;
}

/** The run the argument names, or the newest runs of the automation it names. */
async function runsOf(settings: Settings, store: StateStore, arg: string): Promise<RunRecord[]> {
  const run = await store.getRun(arg);
  if (run) return [run];
  const runs = await automationRuns(settings, store, arg, RUNS_SEARCHED);
  if (runs.length === 0) {
    throw new ConveyorError("usage", `no run and no automation with runs is called ${JSON.stringify(arg)}: give a run id, or an automation's id, slug or definition file key`, {
      hint: "`conveyor runs` lists the recorded runs and their automations.",
    });
  }
  return runs;
}

async function runLogs(store: StateStore, run: RunRecord, identifiers: string[], limit: number): Promise<LogRecord[]> {
  const page = await store.searchLogs({ account: run.account, run: run.id, ...(identifiers.length ? { identifier: identifiers } : {}), records: limit, start: 0 });
  return page.logs;
}

/** A log record's message (JSON text) as one readable cell: the error or reason, or the fields changed. */
function logMessage(record: LogRecord): string {
  let body: unknown;
  try {
    body = JSON.parse(record.message);
  } catch {
    return record.message;
  }
  if (typeof body !== "object" || body === null) return record.message;
  const m = body as Record<string, unknown>;
  const line = typeof m.line === "number" ? ` (line ${m.line})` : "";
  if (typeof m.error === "string") return `${m.error}${line}`;
  if (typeof m.reason === "string") return `${m.reason}${line}`;
  if (Array.isArray(m.fields)) return `fields: ${m.fields.join(", ")}`;
  return record.message;
}

function logTable(logs: readonly LogRecord[], manyRuns: boolean): string {
  const head = [...(manyRuns ? ["run"] : []), "time", "action", "identifier", "result", "message"];
  const table = new Table({ head, style: { head: [], border: [] }, wordWrap: true, colWidths: head.map((h) => (h === "message" ? 60 : null)) });
  for (const r of logs) table.push([...(manyRuns ? [r.job_id] : []), r.timestamp, r.action, r.identifier, r.result, maskSecrets(logMessage(r))]);
  return `${table.toString()}\n`;
}

/** What `conveyor logs` does; logs.ts declares its arguments and options. */
export async function logsAction(arg: string, flags: LogsFlags, command: Command): Promise<void> {
  await runCommand(Boolean(flags.json), async () => {
    const limit = Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new ConveyorError("usage", `--limit must be a whole number from 1 to ${MAX_LIMIT}, not ${flags.limit}`);
    const identifiers = (flags.identifier ?? []).flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
    const settings = settingsFrom(command);
    const store = await openStore(settings);
    const logs: LogRecord[] = [];
    let runs: RunRecord[];
    try {
      runs = await runsOf(settings, store, arg);
      for (const run of runs) {
        if (logs.length >= limit) break;
        logs.push(...(await runLogs(store, run, identifiers, limit - logs.length)));
      }
    } finally {
      await store.close();
    }
    if (flags.json) {
      process.stdout.write(`${maskSecrets(JSON.stringify(logs))}\n`);
      return EXIT.ok;
    }
    const which = runs.length === 1 ? `run ${runs[0]?.id ?? arg}` : `the last ${count(runs.length, "run")} of ${arg}`;
    if (logs.length === 0) {
      process.stdout.write(`no log records for ${which}${identifiers.length ? ` with identifier ${identifiers.join(", ")}` : ""} (a debug run writes none)\n`);
      return EXIT.ok;
    }
    process.stdout.write(logTable(logs, runs.length > 1));
    process.stdout.write(`${count(logs.length, "log record")} of ${which}${logs.length === limit ? ` (--limit ${limit}: there may be more)` : ""}\n`);
    return EXIT.ok;
  });
}
