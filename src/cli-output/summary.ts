import type CliTable from "cli-table3";
import { lazyRequire } from "../lazy-require.js";
import { formatDuration } from "../duration.js";
import { failureLines } from "../pipeline/failure-tally.js";
import { count } from "../plural.js";
import type { RunRecord } from "../state/index.js";

/** Only the readable summary loads it: `--json` and the daemon's run routes do not. */
const cliTable = lazyRequire<typeof CliTable>("cli-table3");

/** The readable end of a run: what happened, in one table, then the error or guard that stopped it and the records that failed. */
export function runSummary(run: RunRecord): string {
  const Table = cliTable();
  const table = new Table({ style: { head: [], border: [] } });
  const c = run.counts;
  const took = run.finished ? Date.parse(run.finished) - Date.parse(run.started) : 0;
  table.push(
    { run: run.id },
    { automation: run.automation },
    { mode: `${run.mode}${run.diff ? " (diff)" : ""}` },
    { outcome: run.outcome ?? "running" },
    ...(run.note ? [{ why: run.note }] : []),
    // Records from before `merged` was counted have none.
    { rows: `${c.rows} read, ${c.row_errors} with errors, ${c.skipped} skipped${c.merged ? `, ${c.merged} merged into earlier rows` : ""}` },
    // A live run stopped part way applied part of its plan: its counts are what it planned, not what it did.
    { [cutShort(run) ? "planned" : "changes"]: `${c.create} create, ${c.update} update, ${c.unchanged} unchanged, ${c.remove} remove, ${c.failed} failed` },
    // Fields planned with the value the service holds already (plan.csv's `same`); records from before this count have none.
    ...(c.same_fields ? [{ "same as service": sameFigure(c.same_fields, c.same ?? 0) }] : []),
    { requests: `${count(run.requests.read, "read")}, ${count(run.requests.write, "write")}` },
    { files: run.files.length ? run.files.map((f) => `${f.name} (${count(f.size, "byte")})`).join("\n") : "none" },
    ...(run.connection?.host_key ? [{ "host key": run.connection.host_key }] : []),
    { took: formatDuration(took) },
  );
  const lines = [table.toString()];
  if (run.guard) lines.push(`stopped by guard ${run.guard.name}: ${run.guard.message}`);
  if (run.error) lines.push(`error (${run.error.code}): ${run.error.message}${run.error.hint ? `\n  how to fix: ${run.error.hint}` : ""}`);
  const failures = failureLines(run.failures ?? [], run.error);
  if (failures.length) lines.push(...failures, `  errors.csv has each one: conveyor debug-files ${run.id} errors.csv`);
  if (cutShort(run)) lines.push(`part of the plan may have been applied: the log records with job_id ${run.id} give each record's result; the next run sends what is missing`);
  if (run.debug_files.length) lines.push(`debug files: conveyor debug-files ${run.id}`);
  for (const m of run.masked ?? []) lines.push(`  ${m.note}`);
  return `${lines.join("\n")}\n`;
}

function sameFigure(fields: number, updates: number): string {
  const text = `${count(fields, "field")} sent all the same`;
  return updates ? `${text}, ${count(updates, "update changes", "updates change")} nothing` : text;
}

/** A run that failed only because its records did went through its whole plan: it was not cut short. */
function cutShort(run: RunRecord): boolean {
  return run.mode === "prod" && (run.outcome === "canceled" || run.outcome === "failed") && run.requests.write > 0 && run.error?.code !== "records_failed";
}

/** The `--json` shape of runs.md. */
export function runJson(run: RunRecord): Record<string, unknown> {
  return {
    id: run.id,
    automation: run.automation,
    mode: run.mode,
    trigger: run.trigger,
    // An event run: the service events it took.
    ...(run.events ? { events: run.events } : {}),
    diff: run.diff,
    outcome: run.outcome,
    started: run.started,
    finished: run.finished,
    counts: run.counts,
    requests: run.requests,
    files: run.files.map((f) => ({ name: f.name, size: f.size, sha256: f.sha256 })),
    debug_files: run.debug_files,
    ...(run.connection ? { connection: run.connection } : {}),
    ...(run.note ? { note: run.note } : {}),
    ...(run.guard ? { guard: run.guard } : {}),
    ...(run.error ? { error: run.error } : {}),
    // What reached the service (live runs that applied), and what was sent with its result unknown.
    ...(run.applied ? { applied: run.applied } : {}),
    ...(run.unconfirmed_files?.length ? { unconfirmed_files: run.unconfirmed_files } : {}),
    ...(run.failures?.length ? { failures: run.failures } : {}),
    ...(run.masked?.length ? { masked: run.masked } : {}),
    // Whether the run can be undone (and why not), and for an undo: which run it took back and what it left alone.
    ...(run.undo ? { undo: run.undo } : {}),
    ...(run.undo_of ? { undo_of: run.undo_of, conflicts: run.conflicts ?? 0 } : {}),
  };
}
