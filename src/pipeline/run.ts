/**
 * One run of one automation, from the definition to the run record: the two
 * IO edges (fetch, apply) and the pure stages between them live in the
 * stage modules; this file only sequences them and decides the outcome.
 *
 * @module
 */

import { rm } from "node:fs/promises";
import path from "node:path";
import { resolveAutomation } from "../definition/index.js";
import { ConveyorError, toConveyorError } from "../errors.js";
import { newCounter } from "../service/index.js";
import type { RunOutcome, RunRecord } from "../state/index.js";
import { DebugFiles } from "./debug-files.js";
import type { RunEnvironment, RunOptions, RunStage } from "./environment.js";
import { failedRecordsError } from "./failure-tally.js";
import { runImport } from "./import/run.js";
import { RunRecorder, newRunId } from "./recorder.js";
import type { PassOutcome } from "./run-context.js";

export function runFolder(dataDir: string, runId: string): string {
  return path.join(dataDir, "runs", runId);
}

export async function runAutomation(env: RunEnvironment, given: RunOptions): Promise<RunRecord> {
  // An event run sends only what was never delivered, and must not leave a snapshot of its few orders alone (what a full run does).
  const options: RunOptions = given.events ? { ...given, diff: true } : given;
  const now = options.now ?? (() => new Date());
  const id = options.id ?? newRunId(now());
  const recorder = await RunRecorder.start(env.store, {
    id,
    automation: options.key,
    account: env.account,
    mode: options.mode,
    trigger: options.trigger,
    diff: options.diff,
    force: options.force,
    notify: options.notify,
    email: options.email,
    ...(options.events ? { events: options.events.ids } : {}),
  });
  const folder = runFolder(env.settings.dataDir, id);
  const workDir = path.join(folder, "work");
  const debug = await DebugFiles.open(path.join(folder, "debug"), env.settings.debugRows, options.mode === "debug");
  const counter = newCounter();
  const client = env.client.withCounter(counter);
  const timings: Array<{ stage: RunStage; at: string }> = [];
  const stage = (s: RunStage, rows = recorder.counts.rows, files?: { done: number; total: number }): void => {
    if (timings[timings.length - 1]?.stage !== s) timings.push({ stage: s, at: now().toISOString() });
    const p = files ? { stage: s, rows, ...files } : { stage: s, rows };
    recorder.progress(p);
    options.progress?.(p);
  };
  let outcome: RunOutcome = "failed";
  let error: ConveyorError | undefined;
  let result: PassOutcome | undefined;
  try {
    stage("prepare");
    // Every parameter problem ends the run here, before a connection is opened.
    const automation = resolveAutomation(options.automation, { runId: id, now: now(), secretKey: env.secretKey });
    if (options.events && !(automation.type === "orders" && automation.action === "export")) {
      throw new ConveyorError("definition_invalid", `an event run needs an order export, and this automation is a ${automation.type} ${automation.action}`, {
        details: { field: "events" },
        hint: "events start order exports only (type orders, action export); run it without events",
      });
    }
    // Each direction's modules load with its first run: a small import need not load the export's renderers or the undo.
    if (options.undo) result = await (await import("../undo/undo-run.js")).runUndo({ env, options, automation, recorder, client, debug, workDir, now, stage }, options.undo);
    else if (automation.action === "export") result = await (await import("./export/run.js")).runExport({ env, options, automation, recorder, client, debug, workDir, now, stage });
    else {
      if (automation.type === "fitment") throw new ConveyorError("usage", "imports of fitment are not available: fitment is export only");
      result = await runImport({ env, options, automation, recorder, client, debug, workDir, now, stage });
    }
    outcome = decideOutcome(result, recorder.record);
    // A partial run committed its snapshot and ledger (runs.md, step 9): what it read counts as read.
    if (options.mode === "prod" && (outcome === "success" || outcome === "partial")) await result.commit?.();
  } catch (raw) {
    error = toConveyorError(raw);
    outcome = error.code === "canceled" || options.signal?.aborted ? "canceled" : "failed";
  }
  stage("done");
  recorder.record.requests = { read: counter.read, write: counter.write };
  const guard = result?.guard ? { name: result.guard.name, message: result.guard.message } : null;
  const failures = debug.failures.list();
  if (failures.length) recorder.record.failures = failures;
  // A kept file with a secret masked is not the file the run read or would send: the record and summary.json say which.
  if (debug.masked.length) recorder.record.masked = [...debug.masked];
  // A run that failed because its records did (nothing stopped it) still says why, and what to do.
  const recordsError = outcome === "failed" && !error && !guard && !result?.applyError ? failedRecordsError(id, failures, debug.rowErrors) : null;
  const endError = error ?? result?.applyError ?? recordsError ?? undefined;
  await debug.addJson("summary.json", {
    run: id,
    automation: options.key,
    mode: options.mode,
    outcome,
    counts: recorder.counts,
    guard,
    error: endError?.toJSON() ?? null,
    ...(failures.length ? { failures } : {}),
    ...(debug.masked.length ? { masked: debug.masked } : {}),
    files: recorder.record.files,
    requests: recorder.record.requests,
    // A debug run: what the live run would make (reads: at least; the service is polled until each file is done).
    ...(options.mode === "debug" && options.automation.action === "import" ? { live_requests: debug.liveRequests(recorder.record.requests) } : {}),
    timings,
  });
  const debugFiles = await debug.finish();
  // Kept where every worker on the store reads them (PostgreSQL: in the database); a file that cannot be kept never fails the run.
  for (const name of debugFiles) {
    await env.store.putDebugFile(id, name, path.join(debug.folder, name)).catch((err: unknown) => env.logger.warn({ run_id: id, file: name, err: (err as Error).message }, "debug file not kept in the state store"));
  }
  // Downloads and scratch data go; the debug files stay for the run record.
  await rm(workDir, { recursive: true, force: true });
  return recorder.finish(outcome, { error: endError, guard, debugFiles });
}

function decideOutcome(result: PassOutcome, record: RunRecord): RunOutcome {
  if (result.guard) return "failed";
  if (result.nothing) return "nothing";
  const c = record.counts;
  const applied = c.create + c.update + c.remove - c.failed;
  if (result.applyError) return applied > 0 ? "partial" : "failed";
  if (c.failed > 0 || c.row_errors > 0) return applied > 0 || c.unchanged > 0 ? "partial" : "failed";
  return "success";
}
