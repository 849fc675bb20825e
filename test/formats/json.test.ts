import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader } from "../../src/formats/index.js";
import { allRows, expectNoRecords, readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("JSON reader", () => {
  it("streams a top-level array, numbering records and keeping numbers as their text", async () => {
    const path = await dir.write(
      "top.json",
      '[{"sku":"0700","ean":12345678901234567890,"price":1.10,"tags":["a","b"],"dims":{"w":2},"gone":null,"ok":true},\n{"sku":"0701","extra":"x"}]',
    );
    const reader = await openReader(path, {});
    expect(reader.format).toBe("json");
    expect(await reader.columns()).toEqual(["sku", "ean", "price", "tags", "dims", "gone", "ok", "extra"]);
    const get = (name: string) => reader.accessor(name);
    const [sku, ean, price, tags, dims, gone, ok, extra] = ["SKU", "ean", "price", "tags", "dims", "gone", "ok", "extra"].map(get);
    const rows = await allRows(reader);
    expect(rows.map((r) => r.line)).toEqual([1, 2]);
    const first = rows[0];
    if (!first) throw new Error("no row");
    expect([sku, ean, price, tags, dims, gone, ok].map((a) => a?.(first))).toEqual([
      "0700",
      "12345678901234567890",
      "1.10",
      "a,b",
      '{"w":"2"}',
      "",
      "true",
    ]);
    expect(extra?.(first)).toBeUndefined();
    expect(reader.accessor("weight")).toBeNull();
  });

  it("finds the only array of objects one level down by default", async () => {
    const path = await dir.write("wrapped.json", '{"meta":{"count":2},"codes":[1,2],"items":[{"sku":"A"},{"sku":"B"}],"next":null}');
    expect((await readRecords(path, {}, ["sku"])).records).toEqual([{ sku: "A" }, { sku: "B" }]);
  });

  it("asks for root when two arrays of objects could hold the records", async () => {
    const path = await dir.write("two.json", '{"items":[{"sku":"A"}],"more":[{"sku":"B"}]}');
    await expect(openReader(path, {}).then(allRows)).rejects.toMatchObject({
      code: "file_format",
      message: expect.stringContaining('("items" and "more")'),
    });
  });

  it("follows an explicit root in dotted, bracket and index form", async () => {
    const path = await dir.write(
      "deep.json",
      '{"data":{"items":[{"sku":"X"},{"sku":"Y"}],"other":[{"sku":"no"}]},"pages":[{"items":[{"sku":"P0"}]},{"items":[{"sku":"P1"}]}]}',
    );
    expect((await readRecords(path, { root: "$.data.items" }, ["sku"])).records).toEqual([{ sku: "X" }, { sku: "Y" }]);
    expect((await readRecords(path, { root: "$['data']['items'][*]" }, ["sku"])).records).toEqual([{ sku: "X" }, { sku: "Y" }]);
    expect((await readRecords(path, { root: "$.pages[1].items" }, ["sku"])).records).toEqual([{ sku: "P1" }]);
    await expect(openReader(path, { root: "$..items" })).rejects.toMatchObject({ code: "definition_invalid" });
  });

  it("evaluates JSONPath field refs relative to each record, first match", async () => {
    const path = await dir.write(
      "paths.json",
      '{"products":[{"id":"0700","offer":{"price":{"amount":"9.90"}},"images":[{"url":"a.jpg"},{"url":"b.jpg"}],"sizes":["S","M"]},{"id":"0701","offer":{}}]}',
    );
    const reader = await openReader(path, { jsonpath: true, root: "$.products" });
    const id = reader.accessor("$.id");
    const amount = reader.accessor("offer.price.amount");
    const image = reader.accessor("$.images[*].url");
    const sizes = reader.accessor("$.sizes");
    expect(reader.accessor("$.nowhere")).toBeNull();
    const rows = await allRows(reader);
    expect(rows.map((r) => [id?.(r), amount?.(r), image?.(r), sizes?.(r)])).toEqual([
      ["0700", "9.90", "a.jpg", "S,M"],
      ["0701", undefined, undefined, undefined],
    ]);
  });

  it("reads JSON Lines, the jsonl writer's output", async () => {
    const path = await dir.write("feed.jsonl", '{"sku":"A","n":"1"}\n{"sku":"B","n":"2"}\n');
    const out = await readRecords(path, {}, ["sku", "n"]);
    expect(out.records).toEqual([
      { sku: "A", n: "1" },
      { sku: "B", n: "2" },
    ]);
    expect(out.lines).toEqual([1, 2]);
    const sniffed = await dir.write("lines.json", '{"sku":"A"}\n{"sku":"B"}\n');
    expect((await readRecords(sniffed, {}, ["sku"])).records).toEqual([{ sku: "A" }, { sku: "B" }]);
  });

  it("reads an empty list of records as no rows, not as a file without the mapped fields", async () => {
    await expectNoRecords(dir, [["empty.json", "[]", undefined], ["empty-root.json", '{"data":{"items":[]}}', "$.data.items"]]);
  });

  it("quotes what the file holds when root is not in it: often the server's error answer", async () => {
    const path = await dir.write("denied.json", '{"error":"invalid api key","status":401}');
    await expect(openReader(path, { root: "$.data.items" })).rejects.toMatchObject({
      code: "file_format",
      message: 'The JSON file has nothing at root "$.data.items": it begins {"error":"invalid api key","status":401}',
      details: { field: "root" },
    });
  });

  it("reports invalid JSON as a file_format error", async () => {
    const path = await dir.write("bad.json", '[{"sku":"A"},{"sku":]');
    await expect(openReader(path, {}).then(allRows)).rejects.toMatchObject({ code: "file_format" });
  });

  it("streams a large array without holding it", async () => {
    const parts = ["["];
    for (let i = 0; i < 30_000; i++) parts.push(`${i ? "," : ""}{"sku":"${String(i).padStart(8, "0")}","price":${i}.5}`);
    parts.push("]");
    const path = await dir.write("large.json", parts.join(""));
    const { records, lines } = await readRecords(path, {}, ["sku", "price"]);
    expect(records.length).toBe(30_000);
    expect(records[29_999]).toEqual({ sku: "00029999", price: "29999.5" });
    expect(lines[29_999]).toBe(30_000);
  });
});
