/**
 * One file config's share of an undo, as an import pass (pass-driver.ts):
 * plan from the journal against the service's current values, then the same
 * op writer (plan.csv, bulk files), guards and bulk-file apply as an import.
 * The undo's own changes go into its own journal, so it can be undone too.
 *
 * @module
 */

import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { FileConfig } from "../definition/index.js";
import { applyProductFiles, bulkIdentifiers } from "../pipeline/import/apply-products.js";
import type { PassInput, PassStrategy } from "../pipeline/import/pass-driver.js";
import { readProductScope } from "../pipeline/import/scope.js";
import { WorkDb } from "../pipeline/import/workdb.js";
import type { BulkFile } from "../pipeline/output/bulk-batcher.js";
import { OpWriter } from "../pipeline/output/op-writer.js";
import type { ProductAction } from "../pipeline/planned-op.js";
import type { JournalEntry } from "./journal-entry.js";
import { undoOp, type Conflict } from "./undo-plan.js";

export interface UndoPassOptions {
  entries: readonly JournalEntry[];
  fields: ReadonlySet<string> | null;
  /** Where the pass's conflicts go (conflicts.csv, the run record). */
  conflicts: Conflict[];
}

/** The fields the undo reads back from the service: those the journal names, and the listing state. */
function fieldsToRead(config: FileConfig, entries: readonly JournalEntry[]): string[] | null {
  // Taking back a create deletes the record when `remove` is delete: its undo journal keeps the whole of it.
  if (config.remove === "delete") return null;
  const fields = new Set<string>([config.identifier, "listed"]);
  for (const e of entries) {
    for (const [field] of e.f ?? []) fields.add(field);
    for (const field of Object.keys(e.r ?? {})) fields.add(field);
  }
  return [...fields];
}

export async function openUndoPass(input: PassInput, options: UndoPassOptions): Promise<PassStrategy> {
  const { config } = input;
  const bulkFolder = path.join(input.workDir, "bulk");
  await mkdir(bulkFolder, { recursive: true });
  const work = new WorkDb(path.join(input.workDir, "work.db"));
  const output = OpWriter.open({ bulkFolder, identifierField: config.identifier, bulkRows: input.bulkRows, planPath: await input.debug.lendPlan(), keptCopies: input.debug.full });
  const undo = input.undo;
  const sink = undo ? undo.writer.sink(undo.config, output, (id) => work.scopeLookup([id], false).get(id)) : output;
  const remove: ProductAction = config.remove === undefined || config.remove === true ? "end" : config.remove;
  let bulkFiles: BulkFile[] = [];
  return {
    plan: async (counts) => {
      input.onStage?.("scope", 0);
      // The whole catalogue, not the file config's search: a record the run ended may have left it.
      const scopeSize = await readProductScope(input.client, { ...config, search: "" }, fieldsToRead(config, options.entries), work, input.signal);
      input.onStage?.("plan", 0);
      let removals = 0;
      for (const entry of options.entries) {
        counts.rows++;
        const now = work.scopeLookup([entry.i], false).get(entry.i);
        const op = undoOp(entry, now, { remove, identifierField: config.identifier, force: input.force, fields: options.fields }, options.conflicts);
        if (!op) {
          counts.unchanged++;
          continue;
        }
        counts[op.kind]++;
        if (op.kind === "remove") removals++;
        const waiting = sink.add(op);
        if (waiting) await waiting;
      }
      const finished = await output.finish();
      bulkFiles = finished.files;
      if (finished.planned) input.debug.notePlan();
      for (const file of bulkFiles) await input.debug.addBulkFile(file.path, file.name, file.searched);
      return { facts: { rows: options.entries.length, removals, scopeSize, removeConfigured: true }, applyFiles: bulkFiles.length };
    },
    apply: async (onFile) => {
      await undo?.writer.flush();
      return applyProductFiles({ client: input.client, files: bulkFiles, runId: input.runId, skipAll: config.skip_all, logs: input.logs, signal: input.signal, failed: work.failures(), journal: input.journal, onFile });
    },
    // The automation's snapshot no longer says what the service holds for these records: a diff run sends them again.
    commit: async () => {
      for (const file of bulkFiles) {
        const ids = await bulkIdentifiers(file);
        if (ids.length) await input.store.snapshotDelete(input.snapshotKey, ids);
      }
    },
    close: async () => {
      await output.close();
      work.close();
    },
  };
}
