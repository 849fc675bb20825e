/**
 * Step 5 of an export run: the output file, written as the rows arrive (the
 * writers wait for the disk, so a million rows never sit in memory). The
 * format is `format`, else the extension of `name`, else CSV; `name` gets its
 * run-time tokens in the automation's time zone.
 *
 * @module
 */

import path from "node:path";
import { pathProblem, renderTokens, type Automation, type FileConfig } from "../../definition/index.js";
import { ConveyorError } from "../../errors.js";
import { csvDialect, openWriter, writeFormat, type RecordWriter, type WriteFormat, type WriteOptions } from "../../formats/index.js";

export interface RenderedFile {
  /** The name the partner sees. */
  name: string;
  format: WriteFormat;
  localPath: string;
  rows: number;
  bytes: number;
}

/** One record on its way to the file: the row the writers take, and what a template sees as `data`. */
export interface RenderItem {
  record: Record<string, string>;
  /** The record's values in column order, for writers that take rows (CSV, TSV). */
  values?: readonly string[];
  data: Record<string, unknown>;
}

/** What the pass writes through: the built-in writers or a template (render-template.ts). */
export interface PassRenderer {
  readonly name: string;
  /** True when `writeBatch` writes from `values` alone, so the pass need not build a record per row. */
  readonly takesValues: boolean;
  recordOf(values: readonly string[]): Record<string, string>;
  /** Rows of values in column order, when the writer takes them (CSV, TSV) and no one needs a record per row. */
  writeValues?(rows: readonly (readonly string[])[]): Promise<void>;
  /**
   * Gives the file up to a writer elsewhere (the render thread), before any row is written: closes it
   * here and says how to open it again. Only writers of rows (CSV, TSV) can.
   */
  handOver?(): Promise<HandOver | null>;
  /** Writes the records; a per-record template also returns each one's render. */
  writeBatch(items: readonly RenderItem[]): Promise<string[] | null>;
  close(): Promise<RenderedFile>;
  abort(): Promise<void>;
}

export interface HandOver {
  file: Omit<RenderedFile, "rows" | "bytes">;
  columns: readonly string[];
  delimiter: string;
  enclosure: string;
}

export interface TokenInput {
  runId: string;
  now: Date;
}

/** The delivered file name: tokens rendered; a name that would leave the connection's folder is refused. */
export function outputName(automation: Automation, config: FileConfig, index: number, tokens: TokenInput): string {
  const template = config.name ?? `${automation.slug}-{{DATETIME}}.csv`;
  const name = renderTokens(template, { runId: tokens.runId, now: tokens.now, timezone: automation.timezone }).trim();
  // The rule that judged the name at save and at run start, so the three can never disagree.
  const wrong = name === "" ? `file name "" is refused: it is empty` : pathProblem(name, "name", automation.connection?.type);
  if (wrong) {
    throw new ConveyorError("unsafe_path", `file_configs[${index}].name is not a file name inside the connection's path: ${wrong}`, {
      details: { field: `file_configs[${index}].name` },
      hint: "Use a plain name with tokens, such as products-{{DATE}}.csv.",
    });
  }
  return name;
}

export function exportFormat(config: FileConfig, name: string): WriteFormat {
  const format = config.format;
  if (format === "csv" || format === "tsv" || format === "json" || format === "jsonl" || format === "xml" || format === "xlsx") return format;
  return writeFormat({ name });
}

export class ExportRenderer implements PassRenderer {
  private rows = 0;
  private closed = false;

  private constructor(
    private readonly writer: RecordWriter,
    private readonly options: WriteOptions,
    private readonly columns: readonly string[],
    readonly name: string,
    readonly format: WriteFormat,
    readonly localPath: string,
  ) {}

  get takesValues(): boolean {
    return this.writer.writeRows !== undefined;
  }

  /** Opens `<dir>/<base name of name>` for writing; the header is written at once. */
  static async open(dir: string, name: string, config: FileConfig, columns: readonly string[]): Promise<ExportRenderer> {
    const format = exportFormat(config, name);
    const localPath = path.join(dir, path.basename(name));
    const options: WriteOptions = {
      format,
      name,
      columns: [...columns],
      ...(config.delimiter === undefined ? {} : { delimiter: config.delimiter }),
      ...(config.enclosure === undefined ? {} : { enclosure: config.enclosure }),
      ...(config.root ? { root: config.root } : {}),
    };
    const writer = await openWriter(localPath, options);
    return new ExportRenderer(writer, options, columns, name, format, localPath);
  }

  /** The row as the writers take it: output column → value. */
  recordOf(values: readonly string[]): Record<string, string> {
    const record: Record<string, string> = {};
    for (let i = 0; i < this.columns.length; i++) record[this.columns[i] as string] = values[i] ?? "";
    return record;
  }

  async write(record: Record<string, string>): Promise<void> {
    this.rows++;
    await this.writer.write(record);
  }

  async writeValues(rows: readonly (readonly string[])[]): Promise<void> {
    if (!this.writer.writeRows) {
      await this.writeBatch(rows.map((values) => ({ record: this.recordOf(values), values, data: {} })));
      return;
    }
    this.rows += rows.length;
    await this.writer.writeRows(rows);
  }

  async writeBatch(items: readonly RenderItem[]): Promise<null> {
    if (this.writer.writeRows) {
      this.rows += items.length;
      await this.writer.writeRows(items.map((item) => item.values ?? this.columns.map((c) => item.record[c] ?? "")));
      return null;
    }
    for (const item of items) await this.write(item.record);
    return null;
  }

  async handOver(): Promise<HandOver | null> {
    const dialect = csvDialect(this.options);
    if (this.closed || this.rows > 0 || !dialect) return null;
    // The header is all it wrote; the new writer writes it again into the file it truncates.
    await this.abort();
    return { file: { name: this.name, format: this.format, localPath: this.localPath }, columns: this.columns, ...dialect };
  }

  async close(): Promise<RenderedFile> {
    this.closed = true;
    const { bytes } = await this.writer.close();
    return { name: this.name, format: this.format, localPath: this.localPath, rows: this.rows, bytes };
  }

  /** After a failure: release the file; its content no longer matters. */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close().catch(() => undefined);
  }
}
