import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import type { ServiceCore } from "./service-core.js";
import { csvLine } from "./csv.js";
import { ADDRESS_FIELDS, ITEM_FIELDS, ORDER_READ_FIELDS, SHIPMENT_FIELDS } from "./order-model.js";
import { matchOrder } from "./order-search.js";
import type { StoredOrder } from "./order-store.js";
import { IDENTIFIER_FIELDS, type IdentifierField } from "./item-store.js";
import type { Matcher } from "./query.js";
import { identifierLookup, type IdentifierLookup } from "./identifier-search.js";
import { cellsLine, itemLine } from "./csv-lines.js";
import { exportThreads, writeInThreads } from "./export-threads.js";

export type ExportType = "items" | "orders";

export interface ExportJob {
  bulk_file: string;
  type: ExportType;
  search: string;
  fields: string;
  status: "queued" | "running" | "complete" | "failed";
  rows: number;
  created: string;
  error: string | null;
}

/** Default columns of an orders export: the order, its addresses, its line; one row per line. */
export const ORDER_EXPORT_FIELDS = [
  ...ORDER_READ_FIELDS,
  ...ADDRESS_FIELDS.map((f) => `billing.${f}`),
  ...ADDRESS_FIELDS.map((f) => `shipping.${f}`),
  ...ITEM_FIELDS.map((f) => `items.${f}`),
];

/**
 * Orders flatten to one row per line: order fields by name, `billing.city`
 * and `shipping.city`, `items.sku` for the row's line, and `shipments.X` /
 * `refunds.X` with the values of all the order's shipments (refunds) joined
 * by `*`. An order without lines is one row.
 */
export function orderRows(order: StoredOrder, columns: readonly string[]): string[][] {
  const base: Record<string, string> = { ...order.fields, oid: String(order.oid), archived: order.fields.archived === "1" ? "1" : "0" };
  for (const [k, v] of Object.entries(order.billing)) base[`billing.${k}`] = v;
  for (const [k, v] of Object.entries(order.shipping)) base[`shipping.${k}`] = v;
  for (const f of new Set([...SHIPMENT_FIELDS, ...order.shipments.flatMap((s) => Object.keys(s))])) base[`shipments.${f}`] = order.shipments.map((s) => s[f] ?? "").join("*");
  for (const f of new Set(order.refunds.flatMap((r) => Object.keys(r)))) base[`refunds.${f}`] = order.refunds.map((r) => r[f] ?? "").join("*");
  const lines = order.items.length ? order.items : [undefined];
  return lines.map((line) => {
    const row: Record<string, string> = { ...base };
    if (line) for (const [k, v] of Object.entries(line.fields)) row[`items.${k}`] = v;
    return columns.map((c) => row[c] ?? "");
  });
}

/**
 * Lines gathered into chunks of about 256 KB before they reach the stream: one
 * write per row filled the stream's 16 KB mark every fifty rows, and each
 * wait for "drain" left the export idle while the disk caught up.
 */
class ChunkedWriter {
  private pending = "";

  constructor(private readonly out: WriteStream) {}

  /** Returns a promise only when a chunk went to the stream: most pages need no await. */
  lines(texts: readonly string[]): Promise<void> | undefined {
    for (const text of texts) this.pending += text;
    return this.pending.length >= CHUNK_CHARS ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (!this.pending) return;
    const text = this.pending;
    this.pending = "";
    if (!this.out.write(text)) await once(this.out, "drain");
  }
}

const CHUNK_CHARS = 256 * 1024;

function isIdentifierField(column: string): column is IdentifierField {
  return (IDENTIFIER_FIELDS as readonly string[]).includes(column);
}

/** Ids from which an export of every item reads in threads: below, a thread's start costs more than it saves. */
const THREADED_FROM = 100_000;

/** Runs exports in the background, streaming rows from SQLite to the CSV so memory stays flat. */
export class ExportRunner {
  private readonly running = new Set<Promise<void>>();
  private threadedJobs = 0;

  constructor(
    private readonly ctx: ServiceCore,
    private readonly options: { threadedFrom?: number } = {},
  ) {}

  job(bulkFile: string): ExportJob | undefined {
    return this.ctx.db.prepare("SELECT * FROM exports WHERE bulk_file = ?").get(bulkFile) as ExportJob | undefined;
  }

  start(job: ExportJob, matcher: Matcher): void {
    const task = this.run(job, matcher)
      .catch((err: unknown) => {
        this.ctx.logger.warn({ err, bulkFile: job.bulk_file }, "export failed");
        this.ctx.db.prepare("UPDATE exports SET status = 'failed', error = ? WHERE bulk_file = ?").run((err as Error).message, job.bulk_file);
      })
      .finally(() => {
        this.running.delete(task);
        this.ctx.waits.ended(job.bulk_file);
      });
    this.running.add(task);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private async run(job: ExportJob, matches: Matcher): Promise<void> {
    const { db } = this.ctx;
    const started = performance.now();
    db.prepare("UPDATE exports SET status = 'running' WHERE bulk_file = ?").run(job.bulk_file);
    const requested = job.fields.split(",").map((f) => f.trim()).filter(Boolean);
    const identifier = job.type === "items" ? "guid" : "oid";
    let columns = requested.length ? [identifier, ...requested.filter((f) => f !== identifier)] : [];
    if (!columns.length) columns = job.type === "items" ? await this.itemColumns(matches) : ORDER_EXPORT_FIELDS;
    const out = createWriteStream(this.ctx.presign.path(job.bulk_file), { highWaterMark: 4 * CHUNK_CHARS });
    const closed = once(out, "close");
    const writer = new ChunkedWriter(out);
    let rows = 0;
    let threads = 0;
    try {
      await writer.lines([csvLine(columns)]);
      const threaded = this.threadedRange(job, columns);
      if (threaded) {
        threads = threaded.threads;
        this.threadedJobs++;
        try {
          await writer.flush();
          rows = await writeInThreads(out, { db: this.ctx.paths.db, columns, ...threaded });
        } finally {
          this.threadedJobs--;
        }
      } else {
        for await (const lines of this.csvPages(job, columns, matches)) {
          rows += lines.length;
          const flushed = writer.lines(lines);
          if (flushed) await flushed;
        }
        await writer.flush();
      }
    } finally {
      out.end();
      await closed;
    }
    db.prepare("UPDATE exports SET status = 'complete', rows = ? WHERE bulk_file = ?").run(rows, job.bulk_file);
    // The job's own time, apart from the worker's read of its file (bench:export reports the two apart).
    this.ctx.logger.info({ bulkFile: job.bulk_file, rows, threads, ms: Math.round(performance.now() - started) }, "export complete");
  }

  /**
   * The ids an export of every item's named fields reads in threads, when
   * there are enough of them (`threadedFrom`, ExportRunner's option), SQLite
   * reads the fields out of each item's JSON, and no other job is reading in
   * threads.
   */
  private threadedRange(job: ExportJob, columns: readonly string[]): { first: number; end: number; threads: number } | null {
    // One job at a time in threads: each thread is an isolate of its own, and the service may run several exports at once.
    if (this.threadedJobs > 0 || job.type !== "items" || job.search.trim() !== "" || !this.ctx.items.readsByRanges(columns)) return null;
    const { first, last } = this.ctx.items.idRange();
    const threads = exportThreads(last - first + 1, this.options.threadedFrom ?? THREADED_FROM);
    return threads ? { first, end: last + 1, threads } : null;
  }

  /** The export's CSV lines, a page of the store at a time. */
  private async *csvPages(job: ExportJob, columns: string[], matches: Matcher): AsyncGenerator<string[]> {
    const everyItem = job.type === "items" && job.search.trim() === "";
    const named = job.type === "items" ? identifierLookup(job.search) : null;
    // Named fields of every item: SQLite reads them out of each item's JSON (a scope read asks for a few of them).
    const fields = everyItem && !columns.every(isIdentifierField) ? this.ctx.items.scanFields(columns) : null;
    if (everyItem && columns.every(isIdentifierField)) {
      for await (const page of this.ctx.items.scanIdentifiers(columns.filter(isIdentifierField))) {
        yield page.map((ids) => csvLine(columns.map((c) => (isIdentifierField(c) ? ids[c] : ""))));
      }
    } else if (fields) {
      for await (const page of fields) yield page.map(cellsLine);
    } else if (named) {
      yield* this.namedItems(named, columns, matches);
    } else if (job.type === "items") {
      const all = job.search.trim() === "";
      for await (const page of this.ctx.items.scan()) {
        const lines: string[] = [];
        for (const item of page) if (all || matches(item)) lines.push(itemLine(item, columns));
        yield lines;
      }
    } else {
      for await (const order of this.ctx.orders.scan()) {
        if (matchOrder(order, matches, false)) yield orderRows(order, columns).map((row) => csvLine(row));
      }
    }
  }

  /**
   * Items a search names by identifier: each item's identifier is compared
   * as the search compares it, and only the items named are read whole
   * (and tested, as every exported item is).
   */
  private async *namedItems(lookup: IdentifierLookup, columns: string[], matches: Matcher): AsyncGenerator<string[]> {
    const { field, texts } = lookup;
    for await (const page of this.ctx.items.scanIdentifiers([field])) {
      const lines: string[] = [];
      for (const ids of page) {
        if (!texts.has(ids[field].trim().toLowerCase())) continue;
        const item = this.ctx.items.find("id", ids.id);
        if (item && matches(item)) lines.push(itemLine(item, columns));
      }
      if (lines.length) yield lines;
    }
  }

  /** Without `fields`: every field any matching item has, guid first (one pass that keeps only the names). */
  private async itemColumns(matches: Matcher): Promise<string[]> {
    const names = new Set<string>(["guid", "id", "sku"]);
    for await (const page of this.ctx.items.scan()) for (const item of page) if (matches(item)) for (const k of Object.keys(item)) names.add(k);
    return [...names];
  }
}

