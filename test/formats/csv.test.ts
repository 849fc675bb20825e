import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConveyorError } from "../../src/errors.js";
import { eachRow, openReader, widthProblem } from "../../src/formats/index.js";
import { allRows, readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("CSV reader", () => {
  it("keeps identifiers as text and numbers records by their physical start line", async () => {
    const path = await dir.write(
      "ids.csv",
      'sku,ean,qty,note\r\n0700,0712345678901,713752E1,plain\r\n0042,"4006381333931",1.50,"two\r\nlines"\r\n\r\n00099,1e3,-0,"x ""quoted"", y"\r\n',
    );
    const { records, lines, columns } = await readRecords(path, {}, ["sku", "ean", "qty", "note"]);
    expect(columns).toEqual(["sku", "ean", "qty", "note"]);
    expect(records).toEqual([
      { sku: "0700", ean: "0712345678901", qty: "713752E1", note: "plain" },
      { sku: "0042", ean: "4006381333931", qty: "1.50", note: "two\r\nlines" },
      { sku: "00099", ean: "1e3", qty: "-0", note: 'x "quoted", y' },
    ]);
    // header line 1; the second record spans lines 3-4; line 5 is blank
    expect(lines).toEqual([2, 3, 6]);
  });

  it("honours delimiter, enclosure, skip_lines and headers", async () => {
    const path = await dir.write("semi.csv", "exported by ERP\nversion 2\nid;name\n1;'a;b'\n2;'it''s'\n");
    const out = await readRecords(path, { delimiter: ";", enclosure: "'", skip_lines: 2 }, ["id", "name"]);
    expect(out.records).toEqual([
      { id: "1", name: "a;b" },
      { id: "2", name: "it's" },
    ]);
    expect(out.lines).toEqual([4, 5]);

    const noHeader = await dir.write("nohead.csv", "1|x\n2|y\n");
    const named = await readRecords(noHeader, { delimiter: "|", headers: ["id", "name"] }, ["id", "name"]);
    expect(named.records).toEqual([
      { id: "1", name: "x" },
      { id: "2", name: "y" },
    ]);
    expect(named.lines).toEqual([1, 2]);
  });

  it("reads TSV by the configured tab delimiter or by the .tsv extension", async () => {
    const path = await dir.write("feed.tsv", "id\tname\n1\ta,b\n");
    expect((await readRecords(path, {}, ["id", "name"])).records).toEqual([{ id: "1", name: "a,b" }]);
    const txt = await dir.write("feed.txt", "id\tname\n1\ta,b\n");
    expect((await readRecords(txt, { delimiter: "\\t" }, ["name"])).records).toEqual([{ name: "a,b" }]);
  });

  it("matches headers exactly, then ignoring case and spaces; ambiguous is an error, missing is null", async () => {
    const path = await dir.write("headers.csv", " SKU ,Price,price,Stock,Stock\nA,1,2,3,4\n");
    const reader = await openReader(path, {});
    expect(await reader.columns()).toEqual([" SKU ", "Price", "price", "Stock", "Stock"]);
    const rows = await allRows(reader);
    const row = rows[0];
    if (!row) throw new Error("no row");
    expect(reader.accessor("sku")?.(row)).toBe("A");
    expect(reader.accessor("Price")?.(row)).toBe("1");
    expect(reader.accessor("price")?.(row)).toBe("2");
    expect(() => reader.accessor("PRICE")).toThrow(/2 columns that match/);
    try {
      reader.accessor("Stock");
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConveyorError);
      expect((err as ConveyorError).code).toBe("header_mismatch");
    }
    expect(reader.accessor("weight")).toBeNull();
  });

  it("yields rows of the wrong width and flags broken quotes without stopping", async () => {
    const path = await dir.write("width.csv", 'a,b,c\n1,2,3\n1,2\n1,2,3,4\n5,6,7\n7,"open\n');
    const reader = await openReader(path, {});
    const columns = await reader.columns();
    const rows = await allRows(reader);
    expect(rows.map((r) => widthProblem(columns, r))).toEqual([
      null,
      "line 3 has 2 fields, the header has 3",
      "line 4 has 4 fields, the header has 3",
      null,
      "line 6 has 2 fields, the header has 3",
    ]);
    expect(rows[4]?.error).toMatch(/unterminated/i);
    expect(rows[3]?.raw).toEqual(["5", "6", "7"]);
  });

  it("keeps line numbers right across chunk boundaries of a large file", async () => {
    const parts = ["id,text\n"];
    const expected: number[] = [];
    let line = 2;
    for (let i = 0; i < 60_000; i++) {
      expected.push(line);
      if (i % 7 === 0) {
        parts.push(`${i},"first\nsecond ""q"" ${"x".repeat(i % 50)}"\n`);
        line += 2;
      } else {
        parts.push(`${i},plain ${"y".repeat(i % 40)}\n`);
        line += 1;
      }
    }
    const path = await dir.write("large.csv", parts.join(""));
    const { lines, records } = await readRecords(path, {}, ["id"]);
    expect(records.length).toBe(60_000);
    expect(records.every((r, i) => r.id === String(i))).toBe(true);
    expect(lines).toEqual(expected);
  });

  it("flags a bulk file and insists on its action column", async () => {
    const ok = await dir.write("bulk.csv", "action,guid,stock\nedit,1,5\n");
    const reader = await openReader(ok, { bulk_file: true });
    expect(reader.bulkFile).toBe(true);
    expect(reader.format).toBe("bulk");
    expect((await allRows(reader)).map((r) => r.raw)).toEqual([["edit", "1", "5"]]);
    const bad = await dir.write("notbulk.csv", "guid,stock\n1,5\n");
    await expect(openReader(bad, { bulk_file: true })).rejects.toMatchObject({ code: "file_format" });
  });

  it("refuses a delimiter that is not one character", async () => {
    const path = await dir.write("d.csv", "a\n1\n");
    await expect(openReader(path, { delimiter: ";;" })).rejects.toMatchObject({ code: "definition_invalid" });
  });

  it("stops on abort", async () => {
    const path = await dir.write("abort.csv", "a\n1\n2\n");
    const reader = await openReader(path, {});
    const controller = new AbortController();
    controller.abort();
    await expect(async () => {
      for await (const _row of eachRow(reader, controller.signal)) void _row;
    }).rejects.toMatchObject({ code: "canceled" });
    await reader.close();
  });
});

describe("CSV reader limits", () => {
  it("fails on an enclosure that never closes instead of reading the rest of the file into one field", async () => {
    const dir2 = await tempDir();
    try {
      const lines = ["id,text", '1,"never closed'];
      for (let i = 0; i < 400_000; i++) lines.push(`${i},some text that follows the broken quote`);
      const path = await dir2.write("runaway.csv", lines.join("\n"));
      await expect(openReader(path, {}).then(allRows)).rejects.toMatchObject({
        code: "file_format",
        message: expect.stringContaining("starting on line 2"),
      });
    } finally {
      await dir2.remove();
    }
  });
});
