import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ItemStore } from "../../src/embedded/item-store.js";

/** ItemStore.scanFields reads fields out of each item's JSON in SQLite: each cell as a scan of the parsed item gives it. */
describe("embedded item store: named fields of every item", () => {
  it("gives each cell as String(item[field] ?? \"\"), a value of another JSON type included", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT NOT NULL UNIQUE, sku TEXT NOT NULL, fields TEXT NOT NULL)");
    const store = new ItemStore(db);
    for (let i = 1; i <= 2500; i++) store.insert({ id: "", guid: `G${i}`, sku: `S${i}`, title: `T, "${i}"`, "it's": `q${i}`, blank: "" });
    // Not what the service writes, but what a hand-edited database may hold.
    db.prepare("INSERT INTO items (guid, sku, fields) VALUES (?, ?, ?)").run("ODD", "S0", JSON.stringify({ title: 12.5, "it's": true, blank: null }));
    // JSON.stringify escapes a lone surrogate; SQLite would decode it into other text than JSON.parse gives.
    store.insert({ id: "", guid: "LONE", sku: "S00", title: "lone \ud800 half", "it's": "pair 🚀", blank: "" });
    // U+FFFD of its own is what SQLite's decoding of a lone surrogate reads as: the item is parsed whole, to the same text.
    store.insert({ id: "", guid: "FFFD", sku: "S000", title: "replaced \uFFFD char", "it's": "x", blank: "" });
    const columns = ["guid", "title", "it's", "blank", "missing", "id", "sku"];
    const expected: string[][] = [];
    for await (const page of store.scan()) for (const item of page) expected.push(columns.map((c) => String(item[c] ?? "")));
    const fields = store.scanFields(columns);
    if (!fields) throw new Error("no field scan for these columns");
    const got: string[][] = [];
    for await (const page of fields) got.push(...page);
    expect(got).toEqual(expected);
    expect(got.at(-3)).toEqual(["ODD", "12.5", "true", "", "", "2501", "S0"]);
    expect(got.at(-2)).toEqual(["LONE", "lone \ud800 half", "pair 🚀", "", "", "2502", "S00"]);
    expect(got.at(-1)).toEqual(["FFFD", "replaced \uFFFD char", "x", "", "", "2503", "S000"]);
    expect(store.scanFields(['a"b'])).toBeNull();
    expect(store.scanFields(Array.from({ length: 20 }, (_, i) => `f${i}`))).toBeNull();
    db.close();
  });
});
