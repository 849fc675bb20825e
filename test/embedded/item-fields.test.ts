import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ItemStore } from "../../src/embedded/item-store.js";
import { ITEMS_SCHEMA, upgradeItems } from "../../src/embedded/item-table.js";

/** The items table as a data folder from before the cell columns held it. */
const OLD_ITEMS = "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE, sku TEXT NOT NULL DEFAULT '', fields TEXT NOT NULL); CREATE INDEX items_sku ON items(sku);";

/** Rows of cells ordered by their first cell, the guid, as SQLite's index orders them. */
const byGuid = (a: ReadonlyArray<string | undefined>, b: ReadonlyArray<string | undefined>): number => ((a[0] ?? "") < (b[0] ?? "") ? -1 : 1);

async function cells(store: ItemStore, columns: string[]): Promise<{ expected: string[][]; got: string[][] }> {
  const expected: string[][] = [];
  for await (const page of store.scan()) for (const item of page) expected.push(columns.map((c) => String(item[c] ?? "")));
  const fields = store.scanFields(columns);
  if (!fields) throw new Error("no field scan for these columns");
  const got: string[][] = [];
  for await (const page of fields) got.push(...page);
  return { expected, got };
}

/** An items table in memory as openDb makes it (the table, then its cells' index), and its store. */
function freshStore(): { db: Database.Database; store: ItemStore } {
  const db = new Database(":memory:");
  db.exec(ITEMS_SCHEMA);
  upgradeItems(db);
  return { db, store: new ItemStore(db) };
}

/** ItemStore.scanFields reads fields out of each item's JSON in SQLite: each cell as a scan of the parsed item gives it. */
describe("embedded item store: named fields of every item", () => {
  it("gives each cell as String(item[field] ?? \"\"), a value of another JSON type included", async () => {
    const { db, store } = freshStore();
    for (let i = 1; i <= 2500; i++) store.insert({ id: "", guid: `G${i}`, sku: `S${i}`, title: `T, "${i}"`, "it's": `q${i}`, blank: "", stock: String(i % 7), ...(i % 5 ? { price: `${i}.50` } : {}) });
    // Not what the service writes, but what a hand-edited database may hold.
    db.prepare("INSERT INTO items (guid, sku, fields) VALUES (?, ?, ?)").run("ODD", "S0", JSON.stringify({ title: 12.5, "it's": true, blank: null, stock: 1e21, price: false }));
    // JSON.stringify escapes a lone surrogate; SQLite would decode it into other text than JSON.parse gives.
    store.insert({ id: "", guid: "LONE", sku: "S00", title: "lone \ud800 half", "it's": "pair 🚀", blank: "", stock: "\udc00", price: "" });
    // U+FFFD of its own is what SQLite's decoding of a lone surrogate reads as: the item is parsed whole, to the same text.
    store.insert({ id: "", guid: "FFFD", sku: "S000", title: "replaced \uFFFD char", "it's": "x", blank: "", stock: "\uFFFD", price: "0.1" });
    // The JSON written by hand after the cells were stored: SQLite stores them again.
    db.prepare("UPDATE items SET fields = ? WHERE guid = 'G7'").run(JSON.stringify({ title: "edited", stock: "99" }));
    const columns = ["guid", "title", "it's", "blank", "missing", "id", "sku", "stock", "price"];
    const { expected, got } = await cells(store, columns);
    expect(got).toEqual(expected);
    expect(got[6]).toEqual(["G7", "edited", "", "", "", "7", "S7", "99", ""]);
    expect(got.at(-3)).toEqual(["ODD", "12.5", "true", "", "", "2501", "S0", "1e+21", "false"]);
    expect(got.at(-2)).toEqual(["LONE", "lone \ud800 half", "pair 🚀", "", "", "2502", "S00", "\udc00", ""]);
    expect(got.at(-1)).toEqual(["FFFD", "replaced \uFFFD char", "x", "", "", "2503", "S000", "\uFFFD", "0.1"]);
    // The cells alone, as a scope read asks for them, read no JSON: their index gives them, in guid order.
    const scope = (await cells(store, ["guid", "stock", "price", "id"])).got;
    expect(scope).toEqual(expected.map((row) => [row[0], row[7], row[8], row[5]]).sort(byGuid));
    expect(scope.slice(0, 3).map((row) => row[0])).toEqual(["FFFD", "G1", "G10"]);
    // Without the guid among the cells, the pages are keyed by it all the same.
    const unkeyed = (await cells(store, ["stock", "id"])).got;
    expect(unkeyed).toEqual([...expected].sort(byGuid).map((row) => [row[7], row[5]]));
    expect(store.scanFields(['a"b'])).toBeNull();
    expect(store.scanFields(Array.from({ length: 20 }, (_, i) => `f${i}`))).toBeNull();
    db.close();
  });
});

describe("embedded items table: a data folder from before the cell columns", () => {
  it("is copied once into the table with cells, ids and the id counter kept", async () => {
    const db = new Database(":memory:");
    db.exec(OLD_ITEMS);
    const insert = db.prepare("INSERT INTO items (guid, sku, fields) VALUES (?, ?, ?)");
    for (let i = 1; i <= 30; i++) insert.run(`G${i}`, `S${i}`, JSON.stringify({ title: `T${i}`, stock: String(i), price: i % 2 ? `${i}.5` : 3 }));
    // The newest ids deleted: AUTOINCREMENT never gives them again, after the upgrade neither.
    db.exec("DELETE FROM items WHERE id > 25");
    const before: string[][] = [];
    for await (const page of new ItemStore(db).scan()) for (const item of page) before.push(["guid", "stock", "price", "title", "id"].map((c) => String(item[c] ?? "")));
    upgradeItems(db);
    const columns = db.prepare("SELECT name FROM pragma_table_xinfo('items')").pluck().all();
    expect(columns).toEqual(["id", "guid", "sku", "fields", "stock_cell", "price_cell"]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'items' AND sql IS NOT NULL").pluck().all()).toEqual(["items_sku", "items_cells"]);
    const store = new ItemStore(db);
    const { expected, got } = await cells(store, ["guid", "stock", "price", "title", "id"]);
    expect(expected).toEqual(before);
    expect(got).toEqual(before);
    expect((await cells(store, ["guid", "stock", "price"])).got).toEqual(before.map((row) => row.slice(0, 3)).sort(byGuid));
    expect(got[1]).toEqual(["G2", "2", "3", "T2", "2"]);
    expect(store.insert({ id: "", guid: "NEW", sku: "N" }).id).toBe("31");
    // Opened again: nothing to do.
    upgradeItems(db);
    expect(store.count()).toBe(26);
    db.close();
  });
});

/** ItemStore.update sets guid and sku only when they change: SQLite rewrites the index of every column a statement sets. */
describe("embedded item store: updates", () => {
  it("updates an item whose guid and sku stay, and one whose sku changes, through every index", async () => {
    const { db, store } = freshStore();
    for (let i = 1; i <= 3; i++) store.insert({ id: "", guid: `G${i}`, sku: `S${i}`, title: `T${i}`, stock: "1", price: "2.00" });
    const first = store.find("guid", "G1");
    const second = store.find("guid", "G2");
    if (!first || !second) throw new Error("items not stored");
    // The same guid and sku: only the fields (and their cells) are written.
    store.update({ ...first, stock: "5", title: "T1 new" }, first);
    // A new sku given the item as it was: the sku index follows.
    store.update({ ...second, sku: "S2-new", stock: "7" }, second);
    expect(store.find("sku", "S1")).toMatchObject({ guid: "G1", stock: "5", title: "T1 new" });
    expect(store.find("sku", "S2")).toBeUndefined();
    expect(store.find("sku", "S2-new")).toMatchObject({ guid: "G2", stock: "7" });
    expect((await cells(store, ["guid", "stock", "price"])).got).toEqual([
      ["G1", "5", "2.00"],
      ["G2", "7", "2.00"],
      ["G3", "1", "2.00"],
    ]);
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    db.close();
  });
});
