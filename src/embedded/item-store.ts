import type Database from "better-sqlite3";
import type { Db } from "./db.js";
import { CELL_FIELDS, CELLS_INDEX, cellColumn } from "./item-table.js";

/** An item: a flat record of string fields; `id`, `guid` and `sku` are always present. */
export type Item = Record<string, string> & { id: string; guid: string; sku: string };

export const IDENTIFIER_FIELDS = ["guid", "sku", "id"] as const;
export type IdentifierField = (typeof IDENTIFIER_FIELDS)[number];

/** Sortable item fields (seed v1 part 2). */
export const SORTABLE_ITEM_FIELDS = [
  "id", "sku", "guid", "stock", "price", "name", "title", "mediacount", "media", "size", "color", "condition",
  "brand", "style", "date", "dateupdated", "status", "state", "category",
] as const;
const NUMERIC_SORT = new Set(["id", "stock", "price", "mediacount", "size"]);

/** A row's own columns: the cell columns repeat what `fields` holds. */
const ROW = "id, guid, sku, fields";

interface Row {
  id: number;
  guid: string;
  sku: string;
  fields: string;
}

function toItem(row: Row): Item {
  // Assigned onto the parsed object: a spread into a new one cost ten microseconds an item in a million-item export.
  const item = JSON.parse(row.fields) as Item;
  item.id = String(row.id);
  item.guid = row.guid;
  item.sku = row.sku;
  return item;
}

/** Past about a dozen fields SQLite's reads of each item's JSON cost more than one JSON.parse of it (identifiers and cells are columns). */
const FIELD_SCAN_COLUMNS = 8;

/** Whether a column is read out of the items' JSON: neither an identifier nor a cell. */
function isJsonField(column: string): boolean {
  return !isIdentifier(column) && !CELL_FIELDS.has(column);
}

function readsJson(columns: readonly string[]): boolean {
  return columns.some(isJsonField);
}

function isIdentifier(column: string): boolean {
  return column === "id" || column === "guid" || column === "sku";
}

/**
 * Items in SQLite: the fields as a JSON column, with guid, sku and id indexed
 * so lookups by any identifier are direct. Scans walk the table in keyed
 * batches so a million items never sit in memory at once.
 */
export class ItemStore {
  // Prepared once: a bulk job or a load calls these for every row.
  private readonly byId;
  private readonly byGuid;
  private readonly bySku;
  private readonly insertRow;
  private readonly updateRow;
  private readonly updateFields;
  private readonly deleteRow;

  constructor(private readonly db: Db) {
    this.byId = db.prepare(`SELECT ${ROW} FROM items WHERE id = ?`);
    this.byGuid = db.prepare(`SELECT ${ROW} FROM items WHERE guid = ?`);
    this.bySku = db.prepare(`SELECT ${ROW} FROM items WHERE sku = ? ORDER BY id LIMIT 1`);
    this.insertRow = db.prepare("INSERT INTO items (guid, sku, fields) VALUES (?, ?, ?)");
    this.updateRow = db.prepare("UPDATE items SET guid = ?, sku = ?, fields = ? WHERE id = ?");
    this.updateFields = db.prepare("UPDATE items SET fields = ? WHERE id = ?");
    this.deleteRow = db.prepare("DELETE FROM items WHERE id = ?");
  }

  find(field: IdentifierField, value: string): Item | undefined {
    let row: Row | undefined;
    if (field === "id") row = /^\d+$/.test(value) ? (this.byId.get(Number(value)) as Row | undefined) : undefined;
    else row = (field === "guid" ? this.byGuid : this.bySku).get(value) as Row | undefined;
    return row && toItem(row);
  }

  insert(fields: Item): Item {
    const { id: _id, guid = "", sku = "", ...rest } = fields;
    const info = this.insertRow.run(guid, sku, JSON.stringify(rest));
    return { ...rest, id: String(info.lastInsertRowid), guid, sku };
  }

  /**
   * Stores `item` over the row of its id. Given the item as it was, an
   * update that keeps its guid and sku leaves their indexes alone: SQLite
   * rewrites the index of every column a statement sets, changed or not.
   */
  update(item: Item, before?: Pick<Item, "guid" | "sku">): void {
    const { id, guid = "", sku = "", ...rest } = item;
    if (before && before.guid === guid && before.sku === sku) this.updateFields.run(JSON.stringify(rest), Number(id));
    else this.updateRow.run(guid, sku, JSON.stringify(rest), Number(id));
  }

  remove(id: string): void {
    this.deleteRow.run(Number(id));
  }

  /** The lowest and the highest id, both 0 when there is no item. */
  idRange(): { first: number; last: number } {
    // A query of min() or max() alone reads one end of the table; of both, every row.
    const end = (fn: "min" | "max"): number => (this.db.prepare(`SELECT coalesce(${fn}(id), 0) FROM items`).pluck().get() as number);
    return { first: end("min"), last: end("max") };
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM items").get() as { n: number }).n;
  }

  /**
   * Every item in id order, a page at a time, yielding to the event loop
   * between pages. Pages, not items: a step of an async generator per item
   * was most of what a million-item export cost.
   */
  async *scan(batch = 1000): AsyncGenerator<Item[]> {
    const page = this.db.prepare(`SELECT ${ROW} FROM items WHERE id > ? ORDER BY id LIMIT ?`);
    let last = 0;
    for (;;) {
      const rows = page.all(last, batch) as Row[];
      if (rows.length) yield rows.map(toItem);
      const tail = rows[rows.length - 1];
      if (!tail || rows.length < batch) return;
      last = tail.id;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Only `id`, `guid` and `sku` of every item, without parsing the rest: the
   * scope read of an import usually asks for the identifier alone. Without
   * `sku`, the guid index alone answers (guid order): it holds guid and id,
   * a tenth of the pages of the table, whose rows carry every field.
   */
  async *scanIdentifiers(columns: readonly IdentifierField[], batch = 5000): AsyncGenerator<Array<Pick<Item, IdentifierField>>> {
    const byGuid = !columns.includes("sku");
    const page = byGuid
      ? this.db.prepare("SELECT id, guid, '' AS sku FROM items WHERE guid > ? ORDER BY guid LIMIT ?")
      : this.db.prepare("SELECT id, guid, sku FROM items WHERE id > ? ORDER BY id LIMIT ?");
    let last: number | string = byGuid ? "" : 0;
    for (;;) {
      const rows = page.all(last, batch) as Array<Pick<Row, "id" | "guid" | "sku">>;
      if (rows.length) yield rows.map((row) => ({ id: String(row.id), guid: row.guid, sku: row.sku }));
      const tail = rows[rows.length - 1];
      if (!tail || rows.length < batch) return;
      last = byGuid ? tail.guid : tail.id;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * The named fields of every item, as cells in the order asked, without
   * parsing each item's JSON in JavaScript: SQLite reads the few fields a
   * scope read asks for, stock and price from their cell columns
   * (item-table.ts) without parsing the JSON. A read of guid, id and the
   * cells alone is answered by their index, in guid order; every other in id
   * order. Item fields are strings; an item holding another JSON scalar
   * there (a number, true) is parsed whole, so that each cell reads as
   * `String(item[field] ?? "")` does. Null for a field name a JSON path
   * cannot spell, or for more JSON fields than pay off this way.
   */
  scanFields(columns: readonly string[], batch = 2000): AsyncGenerator<string[][]> | null {
    const cells = this.jsonCells(columns);
    if (!cells) return null;
    if (columns.every((c) => c === "id" || c === "guid" || CELL_FIELDS.has(c))) {
      // Keyed by guid: read among the cells when it is one of them, else last, past the cells fieldCells reads.
      const guidAt = columns.indexOf("guid");
      const page = this.db.prepare(`SELECT id, ${cells.join(", ")}${guidAt < 0 ? ", guid" : ""} FROM items INDEXED BY ${CELLS_INDEX} WHERE guid > ? ORDER BY guid LIMIT ?`).raw();
      return this.fieldPages(page, columns, batch, "", guidAt < 0 ? columns.length + 1 : guidAt + 1);
    }
    const page = this.db.prepare(`SELECT id, ${cells.join(", ")} FROM items WHERE id > ? ORDER BY id LIMIT ?`).raw();
    return this.fieldPages(page, columns, batch, 0, 0);
  }

  /**
   * scanFields in id order, read by ranges of ids rather than pages of rows:
   * `(from, to)` gives the cells of the items whose id is in [from, to). An
   * export's threads read ranges of their own this way (export-threads.ts).
   * Null where no column is read out of the items' JSON (identifiers and
   * cells cost little to read) or where scanFields gives null.
   */
  fieldRanges(columns: readonly string[]): ((from: number, to: number) => string[][]) | null {
    const cells = this.rangeCells(columns);
    if (!cells) return null;
    const range = this.db.prepare(`SELECT id, ${cells.join(", ")} FROM items WHERE id >= ? AND id < ? ORDER BY id`).raw();
    return (from, to) => (range.all(from, to) as Array<[number, ...Array<string | number | null>]>).map((row) => this.fieldCells(row, columns));
  }

  /** Whether fieldRanges reads `columns`, without preparing its statement. */
  readsByRanges(columns: readonly string[]): boolean {
    return this.rangeCells(columns) !== null;
  }

  /** The cells' SQL of fieldRanges: null where no column is read out of the JSON, or jsonCells gives null. */
  private rangeCells(columns: readonly string[]): string[] | null {
    return readsJson(columns) ? this.jsonCells(columns) : null;
  }

  /** The SQL of each column's cell, or null for a field name a JSON path cannot spell, or for more JSON fields than pay off. */
  private jsonCells(columns: readonly string[]): string[] | null {
    const read = columns.filter(isJsonField);
    if (read.length > FIELD_SCAN_COLUMNS || read.some((c) => /["\\]/.test(c))) return null;
    // A literal path in the SQL (quotes doubled): the statement is prepared once per export.
    const path = (c: string): string => `'$."${c.replace(/'/g, "''")}"'`;
    return columns.map((c) => (c === "id" ? "CAST(id AS TEXT)" : isIdentifier(c) ? c : CELL_FIELDS.has(c) ? cellColumn(c) : `fields ->> ${path(c)}`));
  }

  /** Pages of `page`, whose rows are `[id, ...cells]` (and the key, when it is not among them), keyed by the value at `keyAt`, from past `first`. */
  private async *fieldPages(page: Database.Statement, columns: readonly string[], batch: number, first: number | string, keyAt: number): AsyncGenerator<string[][]> {
    let last = first;
    for (;;) {
      const rows = page.all(last, batch) as Array<[number, ...Array<string | number | null>]>;
      if (rows.length) yield rows.map((row) => this.fieldCells(row, columns));
      const tail = rows[rows.length - 1];
      if (!tail || rows.length < batch) return;
      last = tail[keyAt] ?? last;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * A row of scanFields, `[id, ...cells]`: a cell that is not text or null
   * comes from the item parsed whole, and so does a cell holding U+FFFD. A
   * lone surrogate is stored escaped (as \udxxx) and SQLite decodes it into
   * bytes that reach JavaScript as U+FFFD, where JSON.parse gives the
   * surrogate; testing the few short cells here spares SQLite a search of
   * every item's whole JSON text for the escape.
   */
  private fieldCells(row: [number, ...Array<string | number | null>], columns: readonly string[]): string[] {
    const out = new Array<string>(columns.length);
    for (let i = 0; i < columns.length; i++) {
      const cell = row[i + 1] ?? "";
      if (typeof cell !== "string" || cell.includes("\uFFFD")) return this.parsedCells(row[0], columns);
      out[i] = cell;
    }
    return out;
  }

  private parsedCells(id: number, columns: readonly string[]): string[] {
    const row = this.byId.get(id) as Row | undefined;
    const item: Record<string, string> = row ? toItem(row) : {};
    return columns.map((c) => String(item[c] ?? ""));
  }

  /** Items sorted by one sortable field; numbers sort as numbers. SQLite sorts, JavaScript only iterates. */
  *sorted(field: string, descending: boolean, limit = -1, offset = 0): Generator<Item> {
    const column = field === "id" || field === "guid" || field === "sku" ? field : `json_extract(fields, '$.${field.replace(/[^a-z0-9_]/gi, "")}')`;
    const key = NUMERIC_SORT.has(field) ? `CAST(${column} AS REAL)` : `${column} COLLATE NOCASE`;
    const dir = descending ? "DESC" : "ASC";
    const rows = this.db.prepare(`SELECT ${ROW} FROM items ORDER BY ${key} ${dir}, id ${dir} LIMIT ? OFFSET ?`).iterate(limit, offset) as IterableIterator<Row>;
    for (const row of rows) yield toItem(row);
  }
}
