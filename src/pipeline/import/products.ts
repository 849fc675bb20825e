/**
 * The product strategy of an import pass: the scope is read while the
 * files download and the feed is read, mapped and planned page by page.
 * The plan is computed whole, bulk files included, before the driver's
 * guards look at it; a debug run stops after the guards.
 *
 * @module
 */

import { mkdir } from "node:fs/promises";
import path from "node:path";
import { formatPath, type FileConfig } from "../../definition/index.js";
import type { SourceRow } from "../../formats/index.js";
import { mappedFields, type ImportMapper } from "../../mapping/index.js";
import type { RunCounts } from "../../state/index.js";
import { applyProductFiles, bulkIdentifiers, type ApplyResult } from "./apply-products.js";
import type { BulkFile } from "../output/bulk-batcher.js";
import type { FetchedFile } from "./fetch.js";
import { AHEAD_FROM_BYTES, OpWriter } from "../output/op-writer.js";
import { mappedPlaces } from "./failure-lines.js";
import { notPlannedLog } from "../logs.js";
import { reportRowError, type PassInput, type PassPlan, type PassStrategy } from "./pass-driver.js";
import type { ProductAction } from "../planned-op.js";
import type { ProductPlanConfig } from "./plan.js";
import { ProductPlanner, type OpSink, type PlannerOptions, type PlannerRow } from "./product-planner.js";
import { QUIET_DEBUG, readAndMap, SETTLED, type NotPlanned } from "./read.js";
import { RepeatFinder } from "./repeats.js";
import { journalScope, limitedFields, scopeFields, serviceActionFields, startProductScope, type ScopeRead } from "./scope.js";
import type { SourceIndex } from "./source-index.js";
import { startSourceIndex } from "./source-index-read.js";
import { WorkDb } from "./workdb.js";
import type { LateJournal } from "../../undo/late-journal.js";
import { ownCopy } from "../../memory.js";

function planConfig(config: FileConfig): ProductPlanConfig {
  const product = (v: FileConfig["create"] | FileConfig["update"] | FileConfig["remove"]): ProductAction | undefined =>
    v === undefined || v === true ? undefined : v;
  return {
    identifier: config.identifier,
    create: product(config.create),
    update: product(config.update),
    remove: product(config.remove),
    liveDiff: config.diff_update ? { fields: config.diff_fields ? new Set(config.diff_fields) : null, tolerance: config.diff_tolerance } : undefined,
  };
}

/**
 * Records planned together, for one scope and one snapshot lookup. Small
 * enough that a page is planned before it outlives the young generation
 * of the garbage collector, large enough to keep lookups batched.
 */
const PAGE = 250;

/**
 * Feed lines per record past which a page counts as sparse. A mapped record's
 * values are slices of the decoded piece of text (32 KB) they were cut from,
 * and keep the whole piece alive while a page holds them. A page that gathers
 * its records from a long stretch of the feed (a diff run where one row in a
 * hundred changed) held a piece for each of its records, long enough for the
 * garbage collector to move them to the old generation and collect them there
 * again and again.
 */
const SPARSE_LINES = 4;

/** The row as a page holds it: in a sparse page, with strings of its own. */
export function heldRow(page: readonly PlannerRow[], row: PlannerRow): PlannerRow {
  const first = page[0];
  if (first === undefined || row.line - first.line <= SPARSE_LINES * page.length) return row;
  for (const field in row.values) row.values[field] = ownCopy(row.values[field] ?? "");
  return { ...row, identifier: ownCopy(row.identifier) };
}

/**
 * One streaming pass: the scope is read while the files download and the
 * feed is read (its fields come from the definition), the first header is
 * checked, then each page of mapped records is planned and written as the
 * feed is read, with no copy of the feed in the work database; until the
 * scope is in, the planner settles rows by fingerprint and holds pages
 * (scope-wait.ts). The identifiers seen go to a
 * RepeatFinder (a fixed-size hash set, then files); a feed that repeats one
 * (the last row wins, in its later position) is read a second time through
 * the work database, which settles every duplicate exactly.
 */
export async function openProductPass(input: PassInput): Promise<PassStrategy> {
  const { config } = input;
  await mkdir(path.join(input.workDir, "bulk"), { recursive: true });
  const work = new WorkDb(path.join(input.workDir, "work.db"));
  const repeats = new RepeatFinder(path.join(input.workDir, "repeats"));
  const output = OpWriter.open({ bulkFolder: path.join(input.workDir, "bulk"), identifierField: config.identifier, bulkRows: input.bulkRows, planPath: await input.debug.lendPlan(), keptCopies: input.debug.full });
  // A pass that is no diff run writes a line for most rows: its thread starts while the files download.
  if (!input.diff && (input.listedBytes ?? 0) >= AHEAD_FROM_BYTES) output.startAhead();
  const undo = input.undo;
  const mapped = mappedFields(config);
  const limited = limitedFields(config, mapped);
  const { fields, late } = journalScope(input, work, mapped, limited);
  // A scope of the identifier and the limited fields, for a run that removes nothing, is held beside the source index.
  if (fields?.every((f) => f === config.identifier || limited.includes(f)) && !config.remove) work.holdScope(config.identifier);
  const scope = startProductScope(input.client, config, fields, work, input.signal);
  const sources = startSourceIndex(input);
  // The scope is marked in the index as it streams in, from when the index is read (the rows already in are read
  // back once); a read-back that fails leaves every question to the work database. The feed's rows are noted on
  // the index's entries too, for repeats (repeats.ts).
  sources.index
    .then((index) => {
      if (!index) return;
      work.markScopeIn(index);
      repeats.useMarks(index);
    })
    .catch(() => undefined);
  const sink = late ? late.sink(output) : undo ? undo.writer.sink(undo.config, output, (id) => work.scopeLookup([id], false).get(id)) : output;
  let bulkFiles: BulkFile[] = [];
  return {
    plan: async (counts) => {
      const planned = await planProducts(input, counts, work, repeats, { writer: output, sink, late }, scope, limited, sources.index).finally(() => {
        work.dropScopeMarks();
        return sources.stop();
      });
      bulkFiles = planned.bulkFiles;
      return planned.plan;
    },
    apply: async (onFile) => {
      // Stored before the first bulk file goes: a run killed mid-apply leaves what it takes to undo it.
      await undo?.writer.flush();
      return applyProductFiles({
        client: input.client,
        files: bulkFiles,
        runId: input.runId,
        skipAll: config.skip_all,
        logs: input.logs,
        signal: input.signal,
        failed: work.failures(),
        journal: input.journal,
        onFile,
      });
    },
    places: (files, failed) => mappedPlaces(input, files, failed),
    commit: (apply) => commitSnapshot(input, work, apply, bulkFiles),
    close: async () => {
      // A pass that failed before planning (a download, a header) must not close the work database under the scope read.
      await scope.stop();
      await sources.stop();
      await output.close();
      repeats.close();
      work.close();
    },
  };
}

/** The op writer, and what the planner hands operations to (the writer, or the undo journal in front of it). */
interface PlanOutput {
  writer: OpWriter;
  sink: OpSink;
  /** A live diff run's journal, whose entries are made once the plan is done. */
  late?: LateJournal | undefined;
}

async function planProducts(
  input: PassInput,
  counts: RunCounts,
  work: WorkDb,
  repeats: RepeatFinder,
  out: PlanOutput,
  scope: ScopeRead,
  limited: readonly string[],
  sources: Promise<SourceIndex | null>,
): Promise<{ plan: PassPlan; bulkFiles: BulkFile[] }> {
  const { config } = input;
  const output = out.sink;
  const files = await input.files;
  input.onStage?.("read", 0);
  // What a run without the undo journal reads of the scope: only those fields may be dropped as `same` by a diff run.
  const known = scopeFields(config, mappedFields(config), serviceActionFields(config), { before: input.debug.full && !input.diff, limited });
  const plan = { ...planConfig(config), dropSame: known === null ? null : new Set(known) };
  const options: PlannerOptions = { ...plannerOptions(input, plan, work, output, scope.size, limited), sources };
  // Set once the first header is checked (a closure assigns it, so a holder).
  const current: { planner: ProductPlanner | null } = { planner: null };
  let page: PlannerRow[] = [];
  let repeated = false;
  const read = await readAndMap({
    automation: input.automation,
    config,
    files,
    debug: input.debug,
    ...(input.pointers ? { pointers: input.pointers } : {}),
    beforeRows: async (mapper) => {
      if (current.planner) {
        // The next file's rows are planned with its own mapper.
        if (page.length && !repeated) await current.planner.page(page);
        page = [];
        current.planner.mapper = mapper;
        return;
      }
      // The scope read goes on while the feed is read: the planner settles rows and holds pages until it is in.
      current.planner = new ProductPlanner(options, mapper);
      input.onStage?.("plan", 0);
    },
    fingerprints: input.live || input.diff,
    settlesMost: input.diff,
    sink: {
      settle: async (identifiers, fingerprints) => {
        const planner = current.planner;
        if (repeated || !planner) return new Uint8Array(identifiers.length);
        const codes = await planner.settle(identifiers, fingerprints);
        for (let i = 0; i < identifiers.length; i++) {
          const id = identifiers[i];
          // Planning stops at a repeated identifier, as it does for a mapped record; the second read maps every row.
          if (codes[i] === SETTLED.unchanged && id !== undefined && repeats.note(id, planner.ownEntry(i))) {
            repeated = true;
            page = [];
          }
        }
        return codes;
      },
      record: (identifier, line, values, ignored, source) => {
        if (repeated) return undefined;
        if (repeats.note(identifier)) {
          // Planning stops here; the second read plans the feed as a whole.
          repeated = true;
          page = [];
          return undefined;
        }
        page.push(heldRow(page, source ? { identifier, line, values, ignored, source } : { identifier, line, values, ignored }));
        if (page.length < PAGE || !current.planner) return undefined;
        const rows = page;
        page = [];
        return current.planner.page(rows);
      },
      notPlanned: (event) => {
        current.planner?.mention(event.identifier);
        if (input.live) input.logs.add(notPlannedLog(event));
      },
    },
    now: input.now,
    signal: input.signal,
    onRows: (rows) => {
      out.writer.noteRows(rows);
      if (current.planner) input.onStage?.("plan", rows);
    },
  });
  // Repeats among the identifiers past the finder's memory are found only now; what was planned meanwhile is dropped.
  if (!repeated && repeats.finish()) repeated = true;
  counts.rows += read.rows;
  counts.row_errors += read.rowErrors;
  counts.skipped += read.skipped;
  if (!read.mapper || !current.planner) return { plan: { facts: null }, bulkFiles: [] };
  let done = current.planner;
  if (repeated) {
    input.undo?.writer.discard();
    out.late?.discard();
    done = await planAgain(input, files, work, out.writer, options, read.mapper);
    counts.merged += work.mergedRows;
  } else if (page.length) await done.page(page);
  page = [];
  const scopeSize = await done.scopeIn();
  if (done.vanished.size) await planVanished(input, counts, files, done);
  await done.planRemovals();
  const gained = out.late ? await out.late.finish(scopeSize) : { same: 0, same_fields: 0 };
  for (const key of ["create", "update", "unchanged", "remove", "skipped"] as const) counts[key] += done.counts[key];
  for (const key of ["same", "same_fields"] as const) counts[key] += done.same[key] + gained[key];
  counts.row_errors += done.rowErrors;
  await reportDeferred(input, work);
  const { files: bulkFiles, planned } = await out.writer.finish();
  if (planned) input.debug.notePlan();
  for (const file of bulkFiles) await input.debug.addBulkFile(file.path, file.name, file.searched);
  const changes = { counts: done.changes.counts(), limits: config.change_limits ?? {}, scopeSize, at: formatPath(["file_configs", input.automation.file_configs.indexOf(config)]) };
  const facts = { rows: read.rows, cutAt: read.cutAt, firstError: read.firstError, removals: done.removals, scopeSize, removeConfigured: config.remove !== undefined, changes };
  return { plan: { facts, applyFiles: bulkFiles.length }, bulkFiles };
}

function plannerOptions(input: PassInput, plan: ProductPlanConfig, work: WorkDb, output: OpSink, scope: Promise<number>, limited: readonly string[]): PlannerOptions {
  const changeLimits = { limits: input.config.change_limits ?? {}, fields: limited };
  return { plan, work, output, store: input.store, snapshotKey: input.snapshotKey, diff: input.diff, live: input.live, scope, markSeen: plan.remove !== undefined, changeLimits };
}

/**
 * The feed repeats an identifier: what the first read planned is dropped, and
 * the files are read again (their row errors and records were reported the
 * first time) into the work database, where the last row of an identifier
 * replaces the earlier ones, and planned from there in file order.
 */
async function planAgain(input: PassInput, files: readonly FetchedFile[], work: WorkDb, output: OpWriter, options: PlannerOptions, mapper: ImportMapper<SourceRow>): Promise<ProductPlanner> {
  await output.discard();
  work.resetPlan();
  await readAndMap({
    automation: input.automation,
    config: input.config,
    files,
    debug: QUIET_DEBUG,
    sink: { record: (id, line, values, ignored) => work.addIncoming(id, line, values, ignored) },
    now: input.now,
    signal: input.signal,
  });
  const planner = new ProductPlanner(options, mapper);
  await planner.scopeIn();
  for (const rows of work.incomingPages(PAGE)) await planner.page(rows);
  return planner;
}

/**
 * Rows settled by their fingerprints before the scope was in, whose records
 * the scope then lacked: the files are read again, and those rows alone are
 * mapped and planned, as a read that waited for the scope would have. Rare
 * (a record deleted from the service, or gone from the scope's search,
 * while the feed still has it unchanged); the rest of the feed is only
 * scanned again.
 */
async function planVanished(input: PassInput, counts: RunCounts, files: readonly FetchedFile[], planner: ProductPlanner): Promise<void> {
  const { vanished } = planner;
  let page: PlannerRow[] = [];
  const refused: NotPlanned[] = [];
  await readAndMap({
    automation: input.automation,
    config: input.config,
    files,
    debug: QUIET_DEBUG,
    beforeRows: async (mapper) => {
      if (page.length) await planner.page(page);
      page = [];
      planner.mapper = mapper;
    },
    fingerprints: true,
    sink: {
      settle: async (identifiers) => Uint8Array.from(identifiers, (id) => (id !== undefined && vanished.has(id) ? SETTLED.current : SETTLED.unchanged)),
      record: (identifier, line, values, ignored, source) => {
        if (!vanished.has(identifier)) return undefined;
        page.push(heldRow(page, source ? { identifier, line, values, ignored, source } : { identifier, line, values, ignored }));
        if (page.length < PAGE) return undefined;
        const rows = page;
        page = [];
        return planner.page(rows);
      },
      // The first read never mapped these rows: what mapping them now refuses is reported as the first read reports it.
      notPlanned: (event) => {
        if (vanished.has(event.identifier)) refused.push(event);
      },
    },
    now: input.now,
    signal: input.signal,
  });
  if (page.length) await planner.page(page);
  for (const event of refused) {
    if (event.kind === "error") await reportRowError(input, counts, event.line, event.identifier, event.message);
    else {
      counts.skipped++;
      if (input.live) await input.logs.add(notPlannedLog(event));
    }
  }
}

/** The plan's row errors and (live) skip logs, in the order the plan met them. */
async function reportDeferred(input: PassInput, work: WorkDb): Promise<void> {
  for (const events of work.deferred()) {
    for (const e of events) {
      let logged: Promise<void> | undefined;
      if (e.kind === "error") {
        await input.debug.addError(e.line, e.identifier, e.message);
        if (input.live) logged = input.logs.add(notPlannedLog({ kind: "error", identifier: e.identifier, line: e.line ?? 0, message: e.message }));
      } else logged = input.logs.add({ action: "skip", identifier: e.identifier, result: "warning", message: { reason: e.message } });
      if (logged) await logged;
    }
  }
}

/** Step 9: the snapshot takes the values of what was applied (and unchanged); failed records keep their old one. */
async function commitSnapshot(input: PassInput, work: WorkDb, apply: ApplyResult, files: readonly BulkFile[]): Promise<void> {
  for (const page of work.committable()) {
    const ok = page.filter((e) => !apply.failed.has(e.identifier));
    if (ok.length) await input.store.snapshotPut(input.snapshotKey, ok);
  }
  for (const file of files) {
    if (file.action !== "end" && file.action !== "delete") continue;
    const removed = (await bulkIdentifiers(file)).filter((id) => !apply.failed.has(id));
    if (removed.length) await input.store.snapshotDelete(input.snapshotKey, removed);
  }
}
