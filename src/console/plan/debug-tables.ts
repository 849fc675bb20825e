/**
 * Pages of a run's plan.csv and errors.csv for the plan viewer and its API,
 * read through the state store (PostgreSQL keeps them in the database), never
 * whole: a page without a filter is one seek to the indexed offset before it
 * and at most `every` + 100 records read; a filtered page scans as a stream
 * from the nearest page start it remembers (a small LRU of filters, each with
 * the offsets its pages start at) and stops once the page is full and the
 * next match is seen. Memory stays flat in the file's size.
 *
 * @module
 */

import { badRequest } from "../../http/envelopes.js";
import type { StateStore, StoredDebugFile } from "../../state/index.js";
import { parseFields, scanRecords } from "./csv-scan.js";
import { Lru } from "./lru.js";
import { buildIndex, checkpointBefore, countMatching, INDEX_EVERY, indexFile, loadIndex, saveIndex, type TableIndex } from "./table-index.js";
import { errorRow, hasFilter, planMatcher, planRow, type ErrorRow, type PlanFilter, type PlanRow, type TableName } from "./tables.js";

export const PAGE_ROWS = 100;
/** Page starts remembered per filter: enough to page back and forth through thousands of pages. */
const STARTS_PER_FILTER = 10_000;

export interface TablePage<R> {
  /** null: a filter by identifier whose scan has not reached the end of the file yet. */
  total: number | null;
  page: number;
  pages: number | null;
  /** Whether a page follows this one. */
  more: boolean;
  rows: R[];
  /** The file ends in a line cut off while it was written (a run stopped mid-write): not shown. */
  cut_off: boolean;
}

export interface PlanPage extends TablePage<PlanRow> {
  /** Lines per action (the service action, or the operation where there is none), of the whole plan. */
  actions: Record<string, number>;
  /** Lines per field, of the whole plan ("" for lines that name none). */
  fields: Record<string, number>;
}

interface Start {
  offset: number;
  record: number;
  /** Matching lines before this one. */
  matched: number;
}

interface Cursor {
  starts: Map<number, Start>;
  total: number | null;
  /** A filter by action and field only: the index's checkpoints say where any page starts. */
  seek?: (first: number) => Start;
}

export interface DebugTablesOptions {
  every?: number;
  pageRows?: number;
}

export class DebugTables {
  private readonly indexes = new Lru<string, TableIndex>(16);
  private readonly building = new Map<string, Promise<TableIndex>>();
  private readonly cursors = new Lru<string, Cursor>(64);
  private readonly every: number;
  readonly pageRows: number;

  constructor(
    private readonly store: StateStore,
    private readonly dataDir: string,
    options: DebugTablesOptions = {},
  ) {
    this.every = options.every ?? INDEX_EVERY;
    this.pageRows = options.pageRows ?? PAGE_ROWS;
  }

  /** A page of plan.csv, or null when the run has none. */
  async plan(runId: string, filter: PlanFilter, page: number): Promise<PlanPage | null> {
    const opened = await this.open(runId, "plan.csv");
    if (!opened) return null;
    const { file, index } = opened;
    const counts = { actions: Object.fromEntries(index.actions), fields: Object.fromEntries(index.fields) };
    if (!hasFilter(filter)) {
      const rows = await this.readPage(file, index, page, (v, n) => planRow(v, n));
      return { ...this.shape(index.records, page, rows, index), ...counts };
    }
    const key = `${runId}/plan.csv/${index.size}/${JSON.stringify([filter.action ?? "", filter.field ?? "", filter.identifier ?? ""])}`;
    let cursor = this.cursors.get(key);
    if (!cursor) {
      cursor = { starts: new Map([[1, { offset: index.offsets[0] ?? index.size, record: 0, matched: 0 }]]), total: null };
      // Without an identifier the counts know the total, and the checkpoints where any page begins: no scan to it.
      if (!filter.identifier) {
        cursor.total = countMatching(index, filter.action, filter.field);
        cursor.seek = (first) => checkpointBefore(index, filter.action, filter.field, first);
      }
      this.cursors.set(key, cursor);
    }
    if (cursor.total !== null) this.checkPage(page, cursor.total);
    const found = await this.scanFiltered(file, index, cursor, planMatcher(filter), page);
    const total = cursor.total;
    // An identifier's total is known only now that a scan reached the end: a page past it is refused as any other.
    if (total !== null && found.rows.length === 0) this.checkPage(page, total);
    const pages = total === null ? null : Math.max(1, Math.ceil(total / this.pageRows));
    return { total, page, pages, more: found.more, rows: found.rows, cut_off: index.cutBytes > 0, ...counts };
  }

  /** A page of errors.csv, or null when the run has none. */
  async errors(runId: string, page: number): Promise<TablePage<ErrorRow> | null> {
    const opened = await this.open(runId, "errors.csv");
    if (!opened) return null;
    const rows = await this.readPage(opened.file, opened.index, page, (v, n) => errorRow(v, n));
    return this.shape(opened.index.records, page, rows, opened.index);
  }

  private shape<R>(total: number, page: number, rows: R[], index: TableIndex): TablePage<R> {
    const pages = Math.max(1, Math.ceil(total / this.pageRows));
    return { total, page, pages, more: page < pages, rows, cut_off: index.cutBytes > 0 };
  }

  private checkPage(page: number, total: number): void {
    const pages = Math.max(1, Math.ceil(total / this.pageRows));
    if (page > pages) throw badRequest(`page must be between 1 and ${pages}, not ${page}`);
  }

  /** The file and its index (built now when there is none of this file yet). */
  private async open(runId: string, name: TableName): Promise<{ file: StoredDebugFile; index: TableIndex } | null> {
    const file = await this.store.getDebugFile(runId, name);
    if (!file) return null;
    const key = `${runId}/${name}`;
    const cached = this.indexes.get(key);
    if (cached && cached.size === file.size) return { file, index: cached };
    let pending = this.building.get(key);
    if (!pending) {
      pending = this.loadOrBuild(runId, name, file).finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    const index = await pending;
    this.indexes.set(key, index);
    return { file, index };
  }

  private async loadOrBuild(runId: string, name: TableName, file: StoredDebugFile): Promise<TableIndex> {
    const where = indexFile(this.dataDir, runId, name);
    const kept = await loadIndex(where, name, file.size);
    if (kept && kept.every === this.every) return kept;
    const index = await buildIndex(file, name, this.every);
    // A data folder that cannot be written costs a rebuild next time, not the page.
    await saveIndex(where, index).catch(() => undefined);
    return index;
  }

  /** Page `page` of all records: a seek to the indexed record before it, then at most `every` records skipped. */
  private async readPage<R>(file: StoredDebugFile, index: TableIndex, page: number, row: (values: string[], line: number) => R): Promise<R[]> {
    this.checkPage(page, index.records);
    const first = (page - 1) * this.pageRows;
    if (first >= index.records) return [];
    const k = Math.floor(first / index.every);
    const offset = index.offsets[k] ?? index.size;
    let record = k * index.every;
    const rows: R[] = [];
    await scanRecords(file.open(offset), offset, (buf, start, end) => {
      if (record >= first) rows.push(row(parseFields(buf, start, end), record + 1));
      record++;
      return rows.length < this.pageRows;
    });
    return rows;
  }

  /**
   * Scans from the nearest remembered page start at or before `page`,
   * noting each page start it passes; reads one match past the page to know
   * whether another follows, and the total when it reaches the end.
   */
  private async scanFiltered(file: StoredDebugFile, index: TableIndex, cursor: Cursor, matches: (v: readonly string[]) => boolean, page: number): Promise<{ rows: PlanRow[]; more: boolean }> {
    let from = 1;
    for (const known of cursor.starts.keys()) if (known <= page && known > from) from = known;
    let start = cursor.starts.get(from) ?? { offset: index.size, record: 0, matched: 0 };
    const checkpoint = cursor.seek?.((page - 1) * this.pageRows);
    if (checkpoint && checkpoint.matched > start.matched) start = checkpoint;
    let matched = start.matched;
    let record = start.record;
    const rows: PlanRow[] = [];
    let more = false;
    const end = await scanRecords(file.open(start.offset), start.offset, (buf, s, e, offset) => {
      const line = record++;
      const head = parseFields(buf, s, e, 4);
      if (!matches(head)) return true;
      const at = Math.floor(matched / this.pageRows) + 1;
      if (matched % this.pageRows === 0 && cursor.starts.size < STARTS_PER_FILTER) cursor.starts.set(at, { offset, record: line, matched });
      matched++;
      if (at > page) {
        more = true;
        return false;
      }
      if (at === page) rows.push(planRow(parseFields(buf, s, e), line + 1));
      return true;
    });
    if (end.eof) cursor.total = matched;
    return { rows, more };
  }
}
