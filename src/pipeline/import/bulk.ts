/**
 * The bulk-file strategy of an import pass, for `bulk_file: 1`
 * (automations.md): the file already is a service bulk file,
 * `action` column first and the identifier column second, and is sent as it
 * is, without mapping. Its rows keep their order and their cells (a blank
 * cell resets a field, as the file's author meant); they are only cut into
 * files of `bulk_rows` rows, a new file where the action changes, so each
 * result is logged under its own action. A row the service would refuse
 * (an unknown action, no identifier, a wrong number of cells) is a row
 * error with its line, and the others go on. There is no scope: nothing is
 * looked up, diffed or removed except by the file's own rows.
 *
 * @module
 */

import { mkdir } from "node:fs/promises";
import path from "node:path";
import { ConveyorError } from "../../errors.js";
import { eachRow, openReader, type SourceRow } from "../../formats/index.js";
import type { RunCounts } from "../../state/index.js";
import { applyProductFiles } from "./apply-products.js";
import type { BulkFile } from "../output/bulk-batcher.js";
import { ByteSink } from "../output/byte-sink.js";
import { csvCell } from "../output/csv-cell.js";
import { bulkFilePlaces } from "./failure-lines.js";
import type { FetchedFile } from "./fetch.js";
import { reportRowError, type PassInput, type PassStrategy } from "./pass-driver.js";
import type { OpKind, PlannedOp, ProductAction } from "../planned-op.js";
import { readOptions } from "./read.js";

const KIND: Record<ProductAction, OpKind> = { add: "create", start: "create", edit: "update", relist: "update", end: "remove", delete: "remove" };
const IDENTIFIER_COLUMNS = ["guid", "sku", "id"];

function isAction(value: string): value is ProductAction {
  return Object.hasOwn(KIND, value);
}

export async function openBulkFilePass(input: PassInput): Promise<PassStrategy> {
  const folder = path.join(input.workDir, "bulk");
  await mkdir(folder, { recursive: true });
  let bulkFiles: BulkFile[] = [];
  return {
    plan: async (counts) => {
      const files = await input.files;
      input.onStage?.("read", 0);
      const cutter = new BulkCutter(folder, input.bulkRows);
      try {
        for (const file of files) counts.rows += await readBulkFile(input, counts, file, cutter);
      } finally {
        await cutter.close();
      }
      bulkFiles = cutter.files;
      for (const file of bulkFiles) await input.debug.addBulkFile(file.path, file.name);
      return { facts: { rows: counts.rows, removals: 0, scopeSize: 0, removeConfigured: false } };
    },
    apply: () => applyProductFiles({ client: input.client, files: bulkFiles, runId: input.runId, skipAll: input.config.skip_all, logs: input.logs, signal: input.signal, journal: input.journal }),
    places: (files, failed) => bulkFilePlaces(input, files, failed),
    // No snapshot: nothing is diffed; the driver's ledger and after_import follow the apply.
  };
}

async function readBulkFile(input: PassInput, counts: RunCounts, file: FetchedFile, cutter: BulkCutter): Promise<number> {
  const reader = await openReader(file.localPath, readOptions(input.config, input.automation.connection));
  let rows = 0;
  try {
    const columns = (await reader.columns()) ?? [];
    const idColumn = (columns[1] ?? "").trim();
    if (!IDENTIFIER_COLUMNS.includes(idColumn.toLowerCase())) {
      throw new ConveyorError("file_format", `${file.remote.name}: the second column of a bulk file names the identifier, and "${idColumn}" is not guid, sku or id`, {
        details: { field: "bulk_file" },
        hint: "Fix the file's header (action, guid|sku|id, then the fields), or set bulk_file to 0 and map its columns with field_map.",
      });
    }
    const fields = columns.slice(2);
    for await (const row of eachRow(reader, input.signal)) {
      rows++;
      const cells = row.raw as string[];
      const action = (cells[0] ?? "").trim().toLowerCase();
      const identifier = (cells[1] ?? "").trim();
      if (!isAction(action)) {
        await reportRowError(input, counts, row.line, identifier, `${file.remote.name}: line ${row.line}: unknown action ${JSON.stringify(cells[0] ?? "")} (allowed: ${Object.keys(KIND).join(", ")})`);
        continue;
      }
      const problem = rowProblem(row, cells, columns.length, identifier);
      if (problem !== null) {
        await reportRowError(input, counts, row.line, identifier, `${file.remote.name}: ${problem}`);
        continue;
      }
      const op: PlannedOp = { kind: KIND[action], action, identifier, line: row.line, changes: fields.map((field, i) => ({ field, before: null, after: cells[i + 2] ?? "" })) };
      counts[op.kind]++;
      await input.debug.addPlan(op);
      await cutter.add(action, [columns[0] ?? "action", idColumn, ...fields], [action, identifier, ...cells.slice(2)]);
    }
  } finally {
    await reader.close();
  }
  return rows;
}

/** What is wrong with a row whose action is known, or null. */
function rowProblem(row: SourceRow, cells: readonly string[], width: number, identifier: string): string | null {
  if (row.error !== undefined) return `line ${row.line}: ${row.error}`;
  if (cells.length !== width) return `line ${row.line} has ${cells.length} cells, the header has ${width}`;
  if (identifier === "") return `line ${row.line}: the identifier is empty`;
  return null;
}

/** Bulk files in the order of the rows: a new one at `bulkRows` rows, or where the action or the header changes. */
class BulkCutter {
  readonly files: BulkFile[] = [];
  private open: { file: BulkFile; sink: ByteSink; header: string } | null = null;

  constructor(
    private readonly folder: string,
    private readonly bulkRows: number,
  ) {}

  async add(action: ProductAction, header: readonly string[], cells: readonly string[]): Promise<void> {
    const headerLine = header.map(csvCell).join(",");
    let target = this.open;
    if (!target || target.file.action !== action || target.header !== headerLine || target.file.rows >= this.bulkRows) {
      await this.close();
      target = await this.start(action, header, headerLine);
    }
    target.file.rows++;
    const written = target.sink.write(`${cells.map(csvCell).join(",")}\r\n`);
    if (written) await written;
  }

  private async start(action: ProductAction, header: readonly string[], headerLine: string): Promise<{ file: BulkFile; sink: ByteSink; header: string }> {
    const name = `bulk-${this.files.length + 1}.csv`;
    const file: BulkFile = { name, path: path.join(this.folder, name), action, columns: header.slice(2), rows: 0 };
    const sink = await ByteSink.open(file.path, { size: 64 * 1024 });
    await sink.write(`${headerLine}\r\n`);
    this.open = { file, sink, header: headerLine };
    this.files.push(file);
    return this.open;
  }

  async close(): Promise<void> {
    await this.open?.sink.close();
    this.open = null;
  }
}
