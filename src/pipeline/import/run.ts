/**
 * An import run (runs.md): fetch each file config's files, then one pass per
 * file config. After a live pass applied its files without a fatal error,
 * they go into the ledger and get `after_import` (the pass driver sees to it).
 * The pointers the passes read are stored only when every pass that applied
 * its files put them in the ledger: then the run has committed what it read.
 *
 * @module
 */

import path from "node:path";
import type { ConveyorError } from "../../errors.js";
import { pointerRulesOf, readPointers } from "../../pointers/index.js";
import type { RunFile } from "../../state/index.js";
import { ledgerKey } from "./fetch.js";
import { openProductPass } from "./products.js";
import { openImportSource } from "./source.js";
import { LogWriter } from "../logs.js";
import { runPass, type PassInput, type PassStrategy } from "./pass-driver.js";
import { commitPointers, PointerTally } from "./pointer-tally.js";
import { journalEnabled, UndoJournalWriter } from "../../undo/journal-writer.js";
import { undoRefusal } from "../../undo/undoable.js";
import type { GuardTrip, PassOutcome, RunContext } from "../run-context.js";

export async function runImport(ctx: RunContext): Promise<PassOutcome> {
  const { automation, recorder, options } = ctx;
  const live = options.mode === "prod";
  const source = await openImportSource(ctx);
  const logs = new LogWriter(ctx.env.store, { runId: recorder.record.id, account: ctx.env.account, integration: ctx.env.settings.integration, operation: "import", type: automation.type === "orders" ? "order" : "item" });
  let foundAny = false;
  let applyError: ConveyorError | null = null;
  const rules = pointerRulesOf(automation.connection);
  const pointers = new PointerTally(rules);
  // A pass that applied files it could not ledger holds the pointers back: the next run must read those records again.
  let held = false;
  // The files' hashes, computed while the passes read them: the record has them all before the run ends.
  const hashes: Array<Promise<unknown>> = [];
  // Only a live product import keeps an undo journal; the record says why any other run cannot be undone.
  const refusal = undoRefusal(automation);
  const undo = live && refusal === null && journalEnabled() ? new UndoJournalWriter(ctx.env.store, recorder.record.id) : undefined;
  if (live) recorder.record.undo = refusal === null ? { journal: undo !== undefined, ...(undo ? {} : { reason: "the undo journal was turned off (CONVEYOR_UNDO_JOURNAL=0)" }) } : { journal: false, reason: refusal };
  const downloads: Array<Promise<unknown>> = [];
  // A debug run's copy of each file it read, searched for the run's secrets as the file is hashed: made while the
  // pass reads the file, not before, since a large feed's search held the first row back (figures in the README).
  const copies: Array<Promise<void>> = [];
  let copyFailure: { reason: unknown } | null = null;
  let guard: GuardTrip | null = null;
  try {
    for (const [index, config] of automation.file_configs.entries()) {
      ctx.stage("fetch");
      const chosen = await source.choose(config, index);
      if (chosen.length === 0) continue;
      foundAny = true;
      // The pass awaits the download, and a product pass reads its scope meanwhile.
      const files = source.download(index, chosen).then((fetched) => {
        for (const f of fetched) {
          const entry: RunFile = { name: f.remote.name, size: f.size, sha256: "", modified: f.remote.modified ? f.remote.modified.toISOString() : null };
          recorder.addFile(entry);
          hashes.push(f.digest.then(({ sha256 }) => (entry.sha256 = sha256)));
          // The digest's search for secrets stands for the copy's; without it (a failed read) the copy searches itself.
          const copy = f.digest.then(({ searched }) => searched, () => undefined).then((searched) => ctx.debug.addSource(f.localPath, f.remote.name, searched));
          // Seen by the finally below; until then a failed copy must not count as unhandled.
          copy.catch(() => undefined);
          copies.push(copy);
        }
        return fetched;
      });
      // The pass sees the error; a pass that fails before it awaits the files must not leave it unhandled.
      downloads.push(files.catch(() => undefined));
      const open = passOpener(Boolean(config.bulk_file), automation.type === "orders");
      let ledgered = false;
      const pass = await runPass({
        input: {
          automation,
          config,
          snapshotKey: ledgerKey(options.key, index),
          files,
          listedBytes: chosen.reduce((sum, f) => sum + f.size, 0),
          workDir: path.join(ctx.workDir, `config-${index + 1}`),
          debug: ctx.debug,
          client: ctx.client,
          store: ctx.env.store,
          logs,
          runId: recorder.record.id,
          live,
          diff: options.diff,
          force: options.force,
          bulkRows: ctx.env.settings.bulkRows,
          now: ctx.now,
          signal: options.signal,
          journal: recorder,
          ...(undo ? { undo: { writer: undo, config: index } } : {}),
          ...(pointers.empty ? {} : { pointers }),
          onStage: (stage, rows, files) => ctx.stage(stage, rows, files),
        },
        counts: recorder.counts,
        underWay: (pass) => recorder.passUnderWay(pass),
        open,
        ledger: async (fetched) => {
          await source.finish(config, index, fetched);
          ledgered = true;
        },
      });
      if (pass.apply && !ledgered) held = true;
      if (pass.guard) {
        guard = pass.guard;
        break;
      }
      if (pass.apply?.error) {
        applyError = pass.apply.error;
        break;
      }
    }
  } finally {
    await Promise.all(downloads);
    // Each copy is awaited, whatever ended the passes; a failed one fails the run unless something else already did.
    for (const copy of await Promise.allSettled(copies)) if (copy.status === "rejected") copyFailure ??= { reason: copy.reason };
    await Promise.allSettled(hashes);
    recorder.noteConnection(source.facts());
    if (undo) recorder.record.undo = { journal: true, chunks: undo.chunksStored, entries: undo.count, bytes: undo.bytes };
    await logs.flush();
    await source.close();
  }
  if (copyFailure) throw copyFailure.reason;
  if (guard) return { guard, nothing: false, applyError: null };
  // A debug run stores nothing, but shows what its records would set the pointers to.
  if (!live && !pointers.empty) await ctx.debug.addJson("pointers.json", { stored: await readPointers(ctx.env.store, options.key), read: pointers.values() });
  // Records of `conveyor run --file` are not the connection's: they say nothing of where its feed stands.
  const commits = live && !held && !pointers.empty && (options.localFiles ?? []).length === 0;
  const commit = commits ? () => commitPointers(ctx.env.store, options.key, rules, pointers.values()) : undefined;
  return { guard: null, nothing: !foundAny, applyError, ...(commit ? { commit } : {}) };
}

/** A file config's pass; the order and bulk-file passes load with the first run that has one (most import products). */
function passOpener(bulkFile: boolean, orders: boolean): (input: PassInput) => Promise<PassStrategy> {
  if (bulkFile) return async (input) => (await import("./bulk.js")).openBulkFilePass(input);
  if (orders) return async (input) => (await import("./orders.js")).openOrderPass(input);
  return openProductPass;
}
