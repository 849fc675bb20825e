/**
 * The order strategy of an import pass, the same stages as a product pass:
 * read and map, group rows into orders (`OrderGrouper`), read the scope and
 * plan into request bodies. A debug run stops after the driver's guards,
 * with the plan and the request bodies written.
 *
 * @module
 */

import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { OrderGrouper, checkOrderValues, type ImportMapper, type OrderDraft } from "../../mapping/index.js";
import type { SourceRow } from "../../formats/index.js";
import type { Order } from "../../service/index.js";
import type { RunCounts } from "../../state/index.js";
import { applyOrderBodies } from "./apply-orders.js";
import type { ApplyResult } from "./apply-products.js";
import { OrderBodyBatcher, type OrderBody } from "./order-bodies.js";
import { reportRowError, type GuardFacts, type PassInput, type PassStrategy } from "./pass-driver.js";
import { orderScalars, planArchive, planOrder, type OrderPlanConfig } from "./plan-orders.js";
import type { PlannedOp } from "../planned-op.js";
import { countSame } from "./plan.js";
import { notPlannedLog } from "../logs.js";
import { readAndMap, type ReadCounts } from "./read.js";
import { normalizeId, readOrderScope } from "./scope-orders.js";

/**
 * Orders grouped from one file config are held in memory: rows of one order
 * need not be adjacent, and order files are small (a day's orders or a pick
 * wave's tracking numbers). `MAX_ORDERS` bounds that; a bigger file fails
 * the run with a message saying to split it.
 */
export const MAX_ORDERS = 100_000;

function planConfig(config: FileConfig): OrderPlanConfig {
  return {
    identifier: config.identifier,
    create: config.create !== undefined,
    update: config.update !== undefined,
    remove: config.remove !== undefined,
    liveDiff: config.diff_update ? { fields: config.diff_fields ? new Set(config.diff_fields) : null, tolerance: config.diff_tolerance } : { fields: null, tolerance: 0 },
  };
}

function where(draft: OrderDraft): string {
  return draft.lines.length > 1 ? ` (lines ${draft.lines.join(", ")})` : "";
}

/** `service_actions` on an order's fields and addresses; a `items.`/`shipments.`/`refunds.` field an action sets goes to every entry of that list. */
function serviceActions(mapper: ImportMapper<SourceRow>, draft: OrderDraft, service: Order | undefined): { ok: true } | { skipped: number } | { error: string } {
  const acted = mapper.applyServiceActions(orderScalars(draft), draft.ignored, service);
  if (!acted.ok) return "skipped" in acted ? { skipped: acted.skipped.rule } : { error: acted.error.message };
  // A value an action set is checked as a mapped one is: a status the service would refuse is this order's error.
  const problem = checkOrderValues(acted.record);
  if (problem) return { error: `service_actions: ${problem.message}` };
  for (const f of acted.ignored) draft.ignored.add(f);
  for (const [field, value] of Object.entries(acted.record)) {
    const dot = field.indexOf(".");
    const part = dot < 0 ? "" : field.slice(0, dot);
    const name = field.slice(dot + 1);
    if (part === "billing" || part === "shipping") (draft[part] ??= {})[name] = value;
    else if (part === "items" || part === "refunds") for (const entry of draft[part]) entry[name] = value;
    else if (part === "shipments") for (const entry of draft.shipments) entry.fields[name] = value;
    else draft.fields[field] = value;
  }
  return { ok: true };
}

export async function openOrderPass(input: PassInput): Promise<PassStrategy> {
  await mkdir(path.join(input.workDir, "bodies"), { recursive: true });
  let planned: PlannedOrders = { committable: [], bodies: [] };
  return {
    plan: async (counts) => {
      const read = await readOrders(input, counts);
      if (!read) return { facts: null };
      const { facts, ...orders } = await planOrders(input, counts, read);
      planned = orders;
      return { facts };
    },
    apply: () => applyOrderBodies({ client: input.client, bodies: planned.bodies, logs: input.logs, signal: input.signal, journal: input.journal }),
    commit: (apply) => commitSnapshot(input, planned, apply),
  };
}

interface ReadOrders {
  read: ReadCounts;
  mapper: ImportMapper<SourceRow>;
  drafts: OrderDraft[];
  /** Orders the feed names but that are not planned (skipped, or every row failed): never archived. */
  mentioned: Set<string>;
}

interface PlannedOrders {
  committable: Array<{ identifier: string; values: Record<string, string> }>;
  bodies: OrderBody[];
}

/** Read and map the files, grouping rows into orders; null when no file got as far as its header. */
async function readOrders(input: PassInput, counts: RunCounts): Promise<ReadOrders | null> {
  const files = await input.files;
  input.onStage?.("read", 0);
  const grouper = new OrderGrouper();
  const mentioned = new Set<string>();
  const read = await readAndMap({
    automation: input.automation,
    config: input.config,
    files,
    debug: input.debug,
    ...(input.pointers ? { pointers: input.pointers } : {}),
    sink: {
      record: async (identifier, line, values, ignored) => {
        const problem = grouper.add(identifier, values, ignored, line);
        if (problem) {
          mentioned.add(identifier);
          return reportRowError(input, counts, problem.line, identifier, problem.message);
        }
        if (grouper.size > MAX_ORDERS) {
          throw new ConveyorError("file_format", `the file names more than ${MAX_ORDERS} orders; an order import holds one file config's orders in memory`, {
            details: { line },
            hint: "Have the partner split the file (a day's orders per file is typical), or import it in parts.",
          });
        }
      },
      notPlanned: (event) => {
        if (mentioned.size < MAX_ORDERS) mentioned.add(event.identifier);
        if (input.live) input.logs.add(notPlannedLog(event));
      },
    },
    now: input.now,
    signal: input.signal,
    onRows: (rows) => input.onStage?.("read", rows),
  });
  counts.rows += read.rows;
  counts.row_errors += read.rowErrors;
  counts.skipped += read.skipped;
  counts.merged += grouper.merged;
  if (!read.mapper) return null;
  return { read, mapper: read.mapper, drafts: [...grouper.orders()], mentioned };
}

/** Read the scope, then plan each order (and, with remove, the archives) into request bodies. */
async function planOrders(input: PassInput, counts: RunCounts, { read, mapper, drafts, mentioned }: ReadOrders): Promise<PlannedOrders & { facts: GuardFacts }> {
  const { config } = input;
  input.onStage?.("scope", read.rows);
  const scope = await readOrderScope(input.client, config, drafts.map((d) => d.identifier), input.signal, mentioned);

  input.onStage?.("plan", read.rows);
  const plan = planConfig(config);
  const batcher = new OrderBodyBatcher(path.join(input.workDir, "bodies"), input.bulkRows);
  const record = async (op: PlannedOp): Promise<void> => {
    counts[op.kind] += 1;
    countSame(counts, op);
    await input.debug.addPlan(op);
    if (op.kind === "skipped" && input.live) input.logs.add({ action: "skip", identifier: op.identifier, result: "warning", message: { reason: op.reason ?? "" } });
  };
  const rowError = (line: number | null, identifier: string, message: string): Promise<void> => reportRowError(input, counts, line, identifier, message);
  const snapshot = input.diff ? await input.store.snapshotGet(input.snapshotKey, drafts.map((d) => d.identifier)) : new Map<string, Record<string, string>>();
  const committable: PlannedOrders["committable"] = [];
  for (const draft of drafts) {
    const id = normalizeId(draft.identifier);
    const line = draft.lines[0] ?? null;
    const oids = scope.ambiguous.get(id);
    if (oids) {
      await rowError(line, draft.identifier, `"${draft.identifier}" names ${oids.length} orders in the service (oids ${oids.join(", ")})${where(draft)}: identify orders by oid or order (channel + ordernumber)`);
      continue;
    }
    const service = scope.found.get(id);
    if (mapper.hasServiceActions) {
      const acted = serviceActions(mapper, draft, service);
      if ("skipped" in acted) {
        await record({ kind: "skipped", action: null, identifier: draft.identifier, line, changes: [], reason: `skipped by service_actions[${acted.skipped}]` });
        continue;
      }
      if ("error" in acted) {
        await rowError(line, draft.identifier, acted.error);
        continue;
      }
    }
    const planned = planOrder(plan, { draft, service, snapshot: snapshot.get(draft.identifier) });
    if ("error" in planned) {
      await rowError(line, draft.identifier, `${planned.error}${where(draft)}`);
      continue;
    }
    await record(planned.op);
    if (planned.write) await batcher.add(planned.write);
    if (planned.op.kind === "create" || planned.op.kind === "update" || planned.op.kind === "unchanged") committable.push({ identifier: draft.identifier, values: orderScalars(draft) });
  }
  let removals = 0;
  if (plan.remove) {
    for (const candidate of scope.unnamed) {
      const archive = planArchive(candidate.identifier, candidate.oid);
      removals++;
      await record(archive.op);
      await batcher.add(archive.write);
    }
  }
  const bodies = await batcher.finish();
  for (const body of bodies) await input.debug.addBulkFile(body.path, body.name);
  const facts = { rows: read.rows, cutAt: read.cutAt, firstError: read.firstError, removals, scopeSize: scope.size, removeConfigured: plan.remove };
  return { facts, committable, bodies };
}

/** Step 9: applied and unchanged orders' values become the snapshot; failed ones keep theirs. */
async function commitSnapshot(input: PassInput, { committable, bodies }: PlannedOrders, apply: ApplyResult): Promise<void> {
  const ok = committable.filter((e) => !apply.failed.has(e.identifier));
  for (let i = 0; i < ok.length; i += 1000) await input.store.snapshotPut(input.snapshotKey, ok.slice(i, i + 1000));
  const archived = bodies.filter((b) => b.action === "archive").flatMap((b) => b.orders.map((o) => o.identifier).filter((id) => !apply.failed.has(id)));
  if (archived.length) await input.store.snapshotDelete(input.snapshotKey, archived);
}
