import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Automation, FileConfig } from "../definition/index.js";
import { parseSearch, searchFields } from "../search/index.js";
import type { RunCounts, StateStore } from "../state/index.js";
import type { ServiceClient } from "../service/index.js";
import { applyProductFiles, type ApplyResult } from "./apply-products.js";
import { BulkBatcher, type BulkFile } from "./bulk-batcher.js";
import type { DebugFiles } from "./debug-files.js";
import type { FetchedFile } from "./fetch.js";
import { faultPoint } from "./faults.js";
import { checkGuards, type GuardTrip } from "./guards.js";
import type { LogWriter } from "./logs.js";
import { planProduct, planRemoval, type PlannedOp, type ProductAction, type ProductPlanConfig } from "./plan.js";
import { readAndMap } from "./read.js";
import { readProductScope, scopeFields } from "./scope.js";
import { WorkDb } from "./workdb.js";

/**
 * One product `file_configs[]` pass of an import: read and map into the
 * work database, read the scope, plan, guard, and (live only) apply and
 * commit. The plan is computed whole, bulk files included, before the guards
 * look at it; a debug run stops after the guards.
 */
export interface ProductPassInput {
  automation: Automation;
  config: FileConfig;
  snapshotKey: string;
  files: readonly FetchedFile[];
  workDir: string;
  debug: DebugFiles;
  client: ServiceClient;
  store: StateStore;
  logs: LogWriter;
  runId: string;
  live: boolean;
  diff: boolean;
  force: boolean;
  bulkRows: number;
  counts: RunCounts;
  now: () => Date;
  signal?: AbortSignal;
  onStage?: (stage: "read" | "scope" | "plan" | "apply" | "commit", rows: number) => void;
}

export interface ProductPassResult {
  guard: GuardTrip | null;
  apply: ApplyResult | null;
  bulkFiles: BulkFile[];
}

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

function serviceActionFields(config: FileConfig): string[] {
  return config.service_actions.flatMap((rule) => (rule.search ? searchFields(parseSearch(rule.search)) : []));
}

export async function runProductPass(input: ProductPassInput): Promise<ProductPassResult> {
  const { config, counts } = input;
  await mkdir(input.workDir, { recursive: true });
  const work = new WorkDb(path.join(input.workDir, "work.db"));
  try {
    input.onStage?.("read", 0);
    const read = await readAndMap({
      automation: input.automation,
      config,
      files: input.files,
      debug: input.debug,
      sink: { record: (id, line, values, ignored) => work.addIncoming(id, line, values, ignored) },
      now: input.now,
      signal: input.signal,
      onRows: (rows) => input.onStage?.("read", rows),
    });
    counts.rows += read.rows;
    counts.row_errors += read.rowErrors;
    counts.skipped += read.skipped;
    const mapper = read.mapper;
    if (!mapper) return { guard: null, apply: null, bulkFiles: [] };

    input.onStage?.("scope", read.rows);
    const scopeSize = await readProductScope(input.client, config, scopeFields(config, mapper.fields, serviceActionFields(config)), work, input.signal);

    input.onStage?.("plan", read.rows);
    const plan = planConfig(config);
    const batcher = new BulkBatcher(path.join(input.workDir, "bulk"), config.identifier, input.bulkRows);
    await mkdir(path.join(input.workDir, "bulk"), { recursive: true });
    const record = async (op: PlannedOp): Promise<void> => {
      counts[op.kind] += 1;
      await input.debug.addPlan(op);
      await batcher.add(op);
      if (op.kind === "skipped" && input.live) input.logs.add({ action: "skip", identifier: op.identifier, result: "warning", message: { reason: op.reason ?? "" } });
    };
    for (const page of work.incomingPages()) {
      const snapshot = input.diff ? await input.store.snapshotGet(input.snapshotKey, page.map((r) => r.identifier)) : new Map<string, Record<string, string>>();
      const planned: Array<{ seq: number; kind: string; final: Record<string, string> | null }> = [];
      for (const row of page) {
        let values = row.values;
        let ignored: ReadonlySet<string> = new Set(row.ignored);
        let final: Record<string, string> | null = null;
        if (mapper.hasServiceActions) {
          const acted = mapper.applyServiceActions(values, ignored, row.service);
          if (!acted.ok) {
            const message = "skipped" in acted ? `skipped by service_actions[${acted.skipped.rule}]` : acted.error.message;
            if ("skipped" in acted) await record({ kind: "skipped", action: null, identifier: row.identifier, line: row.line, changes: [], reason: message });
            else {
              counts.row_errors++;
              await input.debug.addError(row.line, row.identifier, message);
            }
            planned.push({ seq: row.seq, kind: "skipped", final: null });
            continue;
          }
          values = acted.record;
          ignored = acted.ignored;
          final = values;
        }
        const before = snapshot.get(row.identifier);
        const op = planProduct(plan, { identifier: row.identifier, line: row.line, values, ignored, service: row.service, snapshot: before });
        await record(op);
        // A snapshot entry that already holds these exact values is left alone (no plan mark, so the commit skips
        // it): in a diff run that is most of a daily feed, not rewritten.
        if (op.kind !== "unchanged" || before === undefined || !sameRecord(before, values)) planned.push({ seq: row.seq, kind: op.kind, final });
      }
      // Only the commit of a live run reads what was planned back.
      if (input.live) work.setPlanned(planned);
    }
    let removals = 0;
    for (const ids of work.unmentioned()) {
      for (const id of ids) {
        const op = planRemoval(plan, id);
        if (!op) continue;
        removals++;
        await record(op);
      }
    }
    const bulkFiles = await batcher.finish();
    for (const file of bulkFiles) await input.debug.addBulkFile(file.path, file.name);

    const guard = checkGuards({
      rows: read.rows,
      rowErrors: counts.row_errors,
      removals,
      scopeSize,
      removeConfigured: config.remove !== undefined,
      removeLimit: config.remove_limit,
      errorLimit: config.error_limit,
      force: input.force,
    });
    if (guard || !input.live) return { guard, apply: null, bulkFiles };

    input.onStage?.("apply", read.rows);
    const apply = await applyProductFiles({ client: input.client, files: bulkFiles, runId: input.runId, skipAll: config.skip_all, logs: input.logs, signal: input.signal });
    counts.failed += apply.failed.size;
    faultPoint("after-apply");

    input.onStage?.("commit", read.rows);
    await commitSnapshot(input, work, apply, bulkFiles);
    return { guard: null, apply, bulkFiles };
  } finally {
    work.close();
  }
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}

/** Step 9: the snapshot takes the values of what was applied (and unchanged); failed records keep their old one. */
async function commitSnapshot(input: ProductPassInput, work: WorkDb, apply: ApplyResult, files: readonly BulkFile[]): Promise<void> {
  // The store stamps entries with its own clock; prune by the same clock.
  const started = new Date().toISOString();
  for (const page of work.committable()) {
    const ok = page.filter((e) => !apply.failed.has(e.identifier));
    if (ok.length) await input.store.snapshotPut(input.snapshotKey, ok);
  }
  const removed = files.filter((f) => f.action === "end" || f.action === "delete").flatMap((f) => f.identifiers.filter((id) => !apply.failed.has(id)));
  if (removed.length) await input.store.snapshotDelete(input.snapshotKey, removed);
  // A full run leaves a fresh snapshot: what it did not see is forgotten.
  if (!input.diff) await input.store.snapshotPruneBefore(input.snapshotKey, started);
}
