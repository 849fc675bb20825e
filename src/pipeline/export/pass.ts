import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Connector } from "../../../connectors/types.js";
import { canDo } from "../../../connectors/index.js";
import type { Automation, FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { createExportMapper, type ExportMapper } from "../../mapping/index.js";
import { count } from "../../plural.js";
import { fileSha256 } from "../../service/index.js";
import { ExportSnapshot, exportSnapshotKey, rowHash, type DiffRow } from "./diff.js";
import { RecordSpool, deliverFile, deliverRecords, type Delivery } from "./deliver.js";
import { ExportRenderer, outputName, type HandOver, type PassRenderer, type RenderedFile } from "./render.js";
import { RenderThread } from "./threaded-render.js";
import { TemplateRenderer } from "./render-template.js";
import { select } from "./select.js";
import type { RunContext } from "../run-context.js";
import type { LogWriter } from "../logs.js";

/**
 * One file config of an export run (runs.md, "Export run", steps 2–7):
 * select → transform (the export mapper) → diff → render → deliver → commit,
 * streamed a batch at a time. A row that cannot be mapped is a row error and
 * the pass goes on. A debug run stops before delivery: the rendered file goes
 * to the debug files and the snapshot does not move.
 */
const BATCH = 1000;

const NO_RECORD: Record<string, string> = Object.freeze({});

export interface PassResult {
  /** False when nothing was delivered (or would be, in debug) because there was nothing to export. */
  output: boolean;
  file: RenderedFile | null;
  delivery: Delivery | null;
}

/** `hash` is "" until someone needs it: a full run's render thread hashes the rows itself. */
interface Pending extends DiffRow {
  values: string[];
  nested?: Record<string, unknown> | undefined;
}

export interface PassInput {
  ctx: RunContext;
  config: FileConfig;
  index: number;
  /** null in debug runs: nothing is delivered. */
  connector: Connector | null;
  logs: LogWriter | null;
}

export async function runExportPass(input: PassInput): Promise<PassResult> {
  const { ctx, config, index } = input;
  const { automation, recorder, options } = ctx;
  const counts = recorder.counts;
  const before = { rows: counts.rows, unchanged: counts.unchanged };
  const live = input.connector !== null;
  const mapper: ExportMapper = createExportMapper(config, { type: automation.type, now: ctx.now });
  const name = outputName(automation, config, index, { runId: recorder.record.id, now: ctx.now() });
  const dir = path.join(ctx.workDir, `config-${index + 1}`);
  await mkdir(dir, { recursive: true });
  const renderer: PassRenderer = config.template
    ? await TemplateRenderer.open(dir, name, config, mapper.columns, { field: `file_configs[${index}].template`, timezone: automation.timezone, now: ctx.now(), params: templateParams(automation) })
    : await ExportRenderer.open(dir, name, config, mapper.columns);
  const snapshot = new ExportSnapshot({
    store: ctx.env.store,
    key: exportSnapshotKey(options.key, index),
    diff: options.diff,
    deliveredOnce: automation.type === "orders",
    stagePath: path.join(dir, "snapshot.jsonl"),
  });
  // payload_multi: 0 asks a connection that can send records for one request per record.
  const perRecord = live && canDo(automation.connection?.type, "send") && !config.payload_multi;
  const spool = perRecord ? new RecordSpool(path.join(dir, "records.jsonl")) : null;

  let pending: Pending[] = [];
  // A CSV export of more than a batch renders on a thread of its own (threaded-render.ts); a small one is not worth its start.
  let threaded = null as { thread: RenderThread; handed: HandOver } | null;
  let batchFrom = 1;
  const flush = async (full: boolean): Promise<void> => {
    if (options.diff) hashRows(pending);
    const changes = await snapshot.classify(pending);
    // A record per row only for whoever reads one: a CSV file alone is written from the values.
    const records = !renderer.takesValues || spool !== null || ctx.debug.wantsRecords;
    if (!records && renderer.writeValues) {
      // The CSV path of a big export: the rows' values straight to the writer, no item per row.
      const sent = pending.filter((_row, i) => {
        const change = changes[i] ?? "create";
        counts[change]++;
        return change !== "unchanged";
      });
      const handed = !threaded && full ? await renderer.handOver?.() : null;
      if (handed) threaded = { handed, thread: RenderThread.start({ localPath: handed.file.localPath, columns: handed.columns, delimiter: handed.delimiter, enclosure: handed.enclosure, stagePath: snapshot.stagePath }) };
      if (threaded) {
        const rows = sent.map((row) => ({ key: snapshot.id(row), values: row.values }));
        await threaded.thread.add(rows, options.diff ? sent.map((row) => row.hash) : null, `rows ${batchFrom}–${counts.rows}`);
      } else {
        await renderer.writeValues(sent.map((row) => row.values));
        await snapshot.stageMany(hashRows(sent));
      }
      batchFrom = counts.rows + 1;
      pending = [];
      ctx.stage("render", counts.rows);
      return;
    }
    const out: { row: Pending; record: Record<string, string> }[] = [];
    for (const [i, row] of pending.entries()) {
      const change = changes[i] ?? "create";
      counts[change]++;
      if (change !== "unchanged") out.push({ row, record: records ? renderer.recordOf(row.values) : NO_RECORD });
    }
    // A template sees the mapped record and, for orders, the order's own structure beside it.
    const bodies = await renderer.writeBatch(out.map(({ row, record }) => ({ record, values: row.values, data: row.nested ? { ...record, ...row.nested } : record })));
    // Staged a batch at a time: a write and an await per row were a tenth of a million-row export's own part.
    await snapshot.stageMany(hashRows(out.map(({ row }) => row)));
    if (spool || ctx.debug.wantsRecords) {
      for (const [i, { row, record }] of out.entries()) {
        const body = bodies?.[i];
        await spool?.add({ id: snapshot.id(row), key: row.key, record, ...(body === undefined ? {} : { body }) });
        await ctx.debug.addRecord(mapper.columns, record);
      }
    }
    batchFrom = counts.rows + 1;
    pending = [];
    ctx.stage("render", counts.rows);
  };
  const closeFile = async (): Promise<RenderedFile> => {
    if (!threaded) return renderer.close();
    const done = await threaded.thread.finish();
    snapshot.addStaged(done.staged);
    return { ...threaded.handed.file, rows: done.rows, bytes: done.bytes };
  };
  const rowError = async (line: number, identifier: string, message: string): Promise<void> => {
    counts.row_errors++;
    await ctx.debug.addError(line, identifier, message);
    input.logs?.add({ action: "skip", identifier, result: "error", message: { line, error: message } });
  };

  try {
    ctx.stage("select", counts.rows);
    const only = options.events ? { orders: options.events.orders } : {};
    for await (const page of select({ automation, config, client: ctx.client, reads: mapper.reads, identifier: mapper.identifier, ...only, ...(options.signal ? { signal: options.signal } : {}) })) {
      for (const selected of page) {
        if (selected.kind === "problem") {
          await rowError(counts.rows + 1, selected.identifier, selected.message);
          continue;
        }
        const line = ++counts.rows;
        const mapped = mapper.map(selected.record, line);
        if (!mapped.ok) {
          if ("skipped" in mapped) {
            counts.skipped++;
            input.logs?.add({ action: "skip", identifier: selected.key, result: "warning", message: { reason: `${mapped.skipped.actions}[${mapped.skipped.rule}] skip` } });
          } else await rowError(line, selected.key, mapped.error.field ? `${mapped.error.field}: ${mapped.error.message}` : mapped.error.message);
          continue;
        }
        pending.push({ key: selected.key, group: selected.group, hash: "", values: mapped.values, nested: config.template ? selected.nested : undefined });
        if (pending.length >= BATCH) {
          if (options.signal?.aborted) throw new ConveyorError("canceled", "the export was canceled while selecting records");
          await flush(true);
        }
      }
    }
    await flush(false);
    const file = await closeFile();
    await snapshot.close();
    if (file.rows === 0 && !config.export_empty) {
      await snapshot.discard();
      recorder.noteIdle(`file_configs[${index}]: ${idleReason(counts.rows - before.rows, counts.unchanged - before.unchanged)}`);
      return { output: false, file: null, delivery: null };
    }
    if (!live || !input.connector) {
      // Both read the whole file: side by side, the run waits for the longer one alone.
      const [, sha256] = await Promise.all([ctx.debug.addSource(file.localPath, file.name), fileSha256(file.localPath)]);
      recorder.addFile({ name: file.name, size: file.bytes, sha256 });
      await snapshot.discard();
      return { output: true, file, delivery: null };
    }
    ctx.stage("deliver", counts.rows);
    const about = { title: automation.name, summary: `${file.name}: ${file.rows} ${file.rows === 1 ? "record" : "records"} exported by ${automation.name}, run ${recorder.record.id}.`, asBody: config.template !== undefined };
    // The file's hash is read while it is delivered: after the delivery, a large file's hash was the run's alone.
    const sha256 = fileSha256(file.localPath);
    sha256.catch(() => undefined);
    const delivery = spool ? await deliverRecords(input.connector, spool, input.logs) : await deliverFile(input.connector, file, about);
    recorder.addFile({ name: file.name, size: file.bytes, sha256: await sha256 });
    counts.failed += delivery.failedRecords;
    ctx.stage("commit", counts.rows);
    // A pass whose every record was refused delivered nothing: the snapshot stays.
    // Each record of a delivered file gets its log record (per-record http logged each answer already).
    const message = { file: file.name };
    const logged = spool ? undefined : (identifiers: readonly string[]): Promise<void> | undefined => input.logs?.addShared(identifiers, { action: "export", result: "success", message });
    if (!spool || delivery.delivered > 0) await snapshot.commit(delivery.failedIds, logged);
    return { output: true, file, delivery };
  } finally {
    await threaded?.thread.abort();
    await renderer.abort();
    await snapshot.close();
    await spool?.close();
  }
}

/** Gives each row its hash, once. */
function hashRows<T extends Pending>(rows: T[]): T[] {
  for (const row of rows) if (row.hash === "") row.hash = rowHash(row.values);
  return rows;
}

function idleReason(selected: number, unchanged: number): string {
  if (selected === 0) return "no record to export: the selection found none";
  if (unchanged === selected) return `nothing to export: ${selected === 1 ? "the one selected record is" : `all ${selected} selected records are`} unchanged since the last export`;
  return `nothing to export: ${count(selected, "record")} selected, none left to send (${unchanged} unchanged, the rest skipped or in error)`;
}

/** `params` in a template: the parameters' values as written; encrypted ones stay out (a template reaches them as <<name>>). */
function templateParams(automation: Automation): Record<string, string> {
  const params: Record<string, string> = {};
  for (const p of automation.parameters) if (!p.encrypted) params[p.name] = p.value === null ? "" : String(p.value);
  return params;
}
