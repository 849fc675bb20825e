import { connectorSpec } from "../../../connectors/index.js";
import type { Automation, FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { openReader, widthProblem, type ReadOptions, type SourceRow } from "../../formats/index.js";
import { createImportMapper, type ImportMapper, type MapResult } from "../../mapping/index.js";
import type { DebugFiles } from "../debug-files.js";
import type { FetchedFile } from "./fetch.js";
import type { PointerTally } from "./pointer-tally.js";
import { sourceFingerprints, type SourceFingerprints } from "./source-fingerprint.js";

/**
 * Steps 3 and 4 of an import: read each downloaded file as a stream of rows,
 * check the header against `field_map` before the first row is used, map
 * every row, and hand mapped records to `sink`. A row that cannot be mapped
 * becomes a row error with its line number; the run goes on.
 */
export interface ReadCounts {
  rows: number;
  rowErrors: number;
  skipped: number;
  /** Where a file ends inside a bad record (`feed.csv, line 203`): it was most likely cut short. */
  cutAt: string | null;
  /** The first row error, `feed.csv, line 12: message`: an error_limit stop quotes it. */
  firstError: string | null;
}

/** A row's source fingerprint, and whether the snapshot holds one made under the same definition for its record. */
export interface RowSource {
  fingerprint: string;
  current: boolean;
}

/** What `MappedSink.settle` says of each row of a batch. */
export const SETTLED = { none: 0, unchanged: 1, current: 2 } as const;

export interface MappedSink {
  record(identifier: string, line: number, values: Record<string, string>, ignored: ReadonlySet<string>, source?: RowSource): void | Promise<void>;
  /**
   * Before a batch is mapped, with each row's identifier and fingerprint
   * (undefined where a row has none): a SETTLED code per row. An `unchanged`
   * row is counted by the sink and not mapped; the others are mapped.
   */
  settle?(identifiers: ReadonlyArray<string | undefined>, fingerprints: ReadonlyArray<string | undefined>): Promise<Uint8Array>;
  /**
   * A record the feed names but that is not planned: dropped by a skip rule, or its row failed
   * after its identifier was mapped. It is still in the feed, so `remove` must not take it away,
   * and the run touched it, so a live run logs it.
   */
  notPlanned?(event: NotPlanned): void;
}

export interface NotPlanned {
  kind: "skipped" | "error";
  identifier: string;
  line: number;
  message: string;
}

/** What reading writes to the debug files: a second read of the same files passes one that writes nothing. */
export type ReadDebug = Pick<DebugFiles, "wantsRecords" | "addRecord" | "addError">;

export const QUIET_DEBUG: ReadDebug = {
  wantsRecords: false,
  addRecord: async () => undefined,
  addError: async () => undefined,
};

export interface ReadInput {
  automation: Automation;
  config: FileConfig;
  files: readonly FetchedFile[];
  debug: ReadDebug;
  sink: MappedSink;
  /** Called with each file's mapper once its header is checked, before its first row reaches `sink`. */
  beforeRows?: (mapper: ImportMapper<SourceRow>) => Promise<void>;
  now: () => Date;
  signal?: AbortSignal;
  onRows?: (rows: number) => void;
  /** Offered every record read, mapped or not: the first read of a pass only, never a second read of the same files. */
  pointers?: PointerTally;
  /** Fingerprint the rows (source-fingerprint.ts), where the mapping allows, for the sink's `settle` and `record`. */
  fingerprints?: boolean;
  /** The sink settles most rows by their fingerprints (a diff run): the reader leaves their cells alone until one is read. */
  settlesMost?: boolean;
}

/**
 * A paginated http feed arrives as one JSON array of the records the
 * connector cut out of each page (`connection.pagination.records`), so a
 * `root` describing one page of the API's answer was applied already.
 */
export function readOptions(config: FileConfig, connection?: Automation["connection"]): ReadOptions {
  const paginated = connection !== undefined && connectorSpec(connection.type)?.joinsPages?.(connection) === true;
  return {
    format: isReadFormat(config.format) ? config.format : undefined,
    delimiter: config.delimiter,
    enclosure: config.enclosure,
    headers: config.headers,
    skip_lines: config.skip_lines,
    encoding: config.encoding,
    sheet: config.sheet,
    root: paginated ? undefined : config.root,
    jsonpath: config.jsonpath,
    xpath: config.xpath,
    bulk_file: config.bulk_file,
    name: config.name,
  };
}

function isReadFormat(format: FileConfig["format"]): format is NonNullable<ReadOptions["format"]> {
  return format === "csv" || format === "fixed" || format === "json" || format === "xml" || format === "xlsx" || format === "bulk";
}

export async function readAndMap(input: ReadInput): Promise<ReadCounts & { mapper: ImportMapper<SourceRow> | null }> {
  const counts: ReadCounts = { rows: 0, rowErrors: 0, skipped: 0, cutAt: null, firstError: null };
  let mapper: ImportMapper<SourceRow> | null = null;
  for (const file of input.files) {
    const reader = await openReader(file.localPath, { ...readOptions(input.config, input.automation.connection), cellsOnDemand: input.settlesMost === true }).catch((err: unknown) => {
      throw inFile(file.remote.name, err);
    });
    try {
      const columns = await reader.columns();
      // The header check happens here, before the first row: a renamed column fails the run.
      mapper = await createImportMapper<SourceRow>(input.config, reader, {
        type: input.automation.type,
        now: input.now,
        rowProblem: (row, cols) => widthProblem(cols ?? columns, row),
      });
      const fields = mapper.fields;
      const observe = input.pointers?.bind(mapper.header, file.remote.name) ?? null;
      if (input.beforeRows) await input.beforeRows(mapper);
      const sources = input.fingerprints ? sourceFingerprints(input.config, reader.format, mapper.header) : null;
      // A batch at a time: the rows of a batch go through without an await each (but one to settle the batch).
      for await (const batch of reader.batches(input.signal)) {
        let settled: Settled | null = null;
        for (let i = 0; i < batch.length; i++) {
          const row = batch[i];
          if (row === undefined) continue;
          // Settled from the first row records.csv no longer takes (it lists the first rows mapped, unchanged or not).
          if (sources && !settled && !input.debug.wantsRecords) settled = await settle(input, batch, i, sources);
          counts.rows++;
          // Rows in error and skipped rows count too: they were read, and the run record lists them.
          observe?.(row);
          const at = settled ? i - settled.from : -1;
          const code = settled?.codes?.[at] ?? SETTLED.none;
          if (code !== SETTLED.unchanged) {
            const fingerprint = settled?.fingerprints[at];
            const source = fingerprint === undefined ? undefined : { fingerprint, current: code === SETTLED.current };
            // Awaited only when there is something to wait for: a million rows, two microtasks each otherwise.
            const waiting = mapRow(input, counts, file.remote.name, mapper, fields, row, source);
            if (waiting) await waiting;
          }
          if (counts.rows % 10_000 === 0) input.onRows?.(counts.rows);
        }
      }
    } catch (err) {
      throw inFile(file.remote.name, err);
    } finally {
      await reader.close();
    }
  }
  input.onRows?.(counts.rows);
  return { ...counts, mapper };
}

/** Maps one row and hands it on: a record to the sink, a skip or a row error to where they are reported; a promise only when one of them waits. */
function mapRow(input: ReadInput, counts: ReadCounts, name: string, mapper: ImportMapper<SourceRow>, fields: readonly string[], row: SourceRow, source: RowSource | undefined): Promise<void> | undefined {
  const result = mapper.map(row, row.line);
  if (result.ok) {
    if (input.debug.wantsRecords) return keptThenSunk(input, fields, result, source);
    return input.sink.record(result.identifier, result.line, result.record, result.ignored, source) || undefined;
  }
  if ("skipped" in result) {
    counts.skipped++;
    const { identifier, rule, line } = result.skipped;
    if (identifier !== undefined) input.sink.notPlanned?.({ kind: "skipped", identifier, line, message: `skipped by vendor_actions[${rule}]` });
    return undefined;
  }
  counts.rowErrors++;
  const { identifier, line } = result.error;
  if (row.open) counts.cutAt = `${name}, line ${line}`;
  const message = `${name}: ${result.error.message}${row.open ? " (the file ends inside this record: it looks cut short)" : ""}`;
  counts.firstError ??= `${name}, line ${line}: ${result.error.message}`;
  if (identifier !== undefined) input.sink.notPlanned?.({ kind: "error", identifier, line, message });
  return input.debug.addError(line, identifier ?? "", message);
}

/** A record records.csv keeps, then the sink's. */
async function keptThenSunk(input: ReadInput, fields: readonly string[], mapped: Extract<MapResult, { ok: true }>, source: RowSource | undefined): Promise<void> {
  await input.debug.addRecord(fields, mapped.record);
  await input.sink.record(mapped.identifier, mapped.line, mapped.record, mapped.ignored, source);
}

/** The fingerprints of a batch's rows from `from` on, and the sink's SETTLED code of each (null without a `settle`). */
interface Settled {
  from: number;
  fingerprints: Array<string | undefined>;
  codes: Uint8Array | null;
}

async function settle(input: ReadInput, batch: readonly SourceRow[], from: number, sources: SourceFingerprints): Promise<Settled> {
  const rows = from === 0 ? batch : batch.slice(from);
  const fingerprints = rows.map((row) => sources.of(row));
  if (!input.sink.settle) return { from, fingerprints, codes: null };
  const ids = rows.map((row, i) => (fingerprints[i] === undefined ? undefined : sources.identifier(row)));
  return { from, fingerprints, codes: await input.sink.settle(ids, fingerprints) };
}

/** A file that cannot be read names itself: a run may read several. */
function inFile(name: string, err: unknown): unknown {
  if (!(err instanceof ConveyorError) || err.code !== "file_format" || err.message.includes(name)) return err;
  return new ConveyorError(err.code, `${name}: ${err.message}`, { cause: err, retryable: err.retryable, details: err.details, ...(err.hint ? { hint: err.hint } : {}) });
}
