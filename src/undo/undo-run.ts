/**
 * An undo run (issue 33): a run of the automation whose journal it reads.
 * Each file config the journal names is a pass of its own through the import's
 * pass driver (guards, bulk-file apply, fault points, snapshot), and the run
 * as a whole keeps one record, one plan.csv, one conflicts.csv and its own journal.
 *
 * @module
 */

import path from "node:path";
import { ConveyorError } from "../errors.js";
import type { UndoRequest } from "../pipeline/environment.js";
import { ledgerKey } from "../pipeline/import/fetch.js";
import { runPass } from "../pipeline/import/pass-driver.js";
import { LogWriter } from "../pipeline/logs.js";
import type { PassOutcome, RunContext } from "../pipeline/run-context.js";
import type { RunRecord } from "../state/index.js";
import { decodeChunk, type JournalEntry } from "./journal-entry.js";
import { journalEnabled, UndoJournalWriter } from "./journal-writer.js";
import { openUndoPass } from "./undo-pass.js";
import type { Conflict } from "./undo-plan.js";
import { undoRefusal } from "./undoable.js";

const CONFLICT_COLUMNS = ["identifier", "field", "before", "after", "now"] as const;

/** The run to undo, checked: it exists, is this automation's, was live and kept a journal. */
export async function undoableRun(ctx: RunContext, of: string): Promise<RunRecord> {
  const run = await ctx.env.store.getRun(of);
  if (!run) throw new ConveyorError("not_found", `run ${of} does not exist (or was deleted by run_retention with its undo journal)`, { hint: "List the runs with conveyor runs <automation>." });
  if (run.automation !== ctx.options.key) throw new ConveyorError("usage", `run ${of} is of automation ${run.automation}, not ${ctx.options.key}`);
  const refusal = undoRefusal(ctx.automation);
  if (refusal !== null) throw new ConveyorError("usage", `run ${of} cannot be undone: ${refusal}`, { details: { field: "undo" } });
  if (run.mode !== "prod") throw new ConveyorError("usage", `run ${of} is a debug run: it changed nothing, so there is nothing to undo`);
  if (run.outcome === null) throw new ConveyorError("usage", `run ${of} is still running: undo it once it has ended`);
  if (run.undo?.journal !== true) {
    throw new ConveyorError("usage", `run ${of} cannot be undone: ${run.undo?.reason ?? "it has no undo journal (it ran before Conveyor kept one)"}`);
  }
  return run;
}

async function readJournal(ctx: RunContext, of: string, request: UndoRequest): Promise<Map<number, JournalEntry[]>> {
  const only = request.identifiers.length ? new Set(request.identifiers) : null;
  const byConfig = new Map<number, JournalEntry[]>();
  for (const [index, body] of (await ctx.env.store.getUndoChunks(of)).entries()) {
    for (const entry of decodeChunk(body, `chunk ${index} of run ${of}`)) {
      if (only && !only.has(entry.i)) continue;
      const list = byConfig.get(entry.c) ?? [];
      list.push(entry);
      byConfig.set(entry.c, list);
    }
  }
  return byConfig;
}

export async function runUndo(ctx: RunContext, request: UndoRequest): Promise<PassOutcome> {
  const { automation, recorder, options } = ctx;
  const live = options.mode === "prod";
  recorder.record.undo_of = request.of;
  await undoableRun(ctx, request.of);
  const journal = await readJournal(ctx, request.of, request);
  const fields = request.fields.length ? new Set(request.fields) : null;
  const writer = live && journalEnabled() ? new UndoJournalWriter(ctx.env.store, recorder.record.id) : undefined;
  if (live) recorder.record.undo = { journal: writer !== undefined };
  const logs = new LogWriter(ctx.env.store, { runId: recorder.record.id, account: ctx.env.account, integration: ctx.env.settings.integration, operation: "import", type: "item" });
  const conflicts: Conflict[] = [];
  let nothing = true;
  try {
    for (const [index, entries] of [...journal.entries()].sort((a, b) => a[0] - b[0])) {
      const config = automation.file_configs[index];
      if (!config) {
        throw new ConveyorError("definition_invalid", `run ${request.of} changed records through file_configs[${index}], and the automation has no such file config now`, {
          hint: "Undo it with the definition the run used (the file configs in the same order).",
        });
      }
      nothing = false;
      const pass = await runPass({
        input: {
          automation,
          config,
          snapshotKey: ledgerKey(options.key, index),
          files: Promise.resolve([]),
          workDir: path.join(ctx.workDir, `undo-${index + 1}`),
          debug: ctx.debug,
          client: ctx.client,
          store: ctx.env.store,
          logs,
          runId: recorder.record.id,
          live,
          // Only the records the undo touched leave the snapshot: a full run's pruning would empty it.
          diff: true,
          force: options.force,
          bulkRows: ctx.env.settings.bulkRows,
          now: ctx.now,
          signal: options.signal,
          journal: recorder,
          ...(writer ? { undo: { writer, config: index } } : {}),
          onStage: (stage, rows, files) => ctx.stage(stage, rows, files),
        },
        counts: recorder.counts,
        underWay: (pass) => recorder.passUnderWay(pass),
        open: (input) => openUndoPass(input, { entries, fields, conflicts }),
        ledger: async () => undefined,
      });
      if (pass.guard) return { guard: pass.guard, nothing: false, applyError: null };
      if (pass.apply?.error) return { guard: null, nothing: false, applyError: pass.apply.error };
    }
  } finally {
    await logs.flush();
    recorder.record.conflicts = conflicts.length;
    if (conflicts.length) await ctx.debug.addTable("conflicts.csv", CONFLICT_COLUMNS, conflicts.map((c) => ({ ...c })));
    if (writer) recorder.record.undo = { journal: true, chunks: writer.chunksStored, entries: writer.count, bytes: writer.bytes };
  }
  return { guard: null, nothing, applyError: null };
}
