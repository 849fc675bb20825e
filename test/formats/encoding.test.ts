import { gzipSync } from "node:zlib";
import iconv from "iconv-lite";
import yazl from "yazl";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader } from "../../src/formats/index.js";
import { allRows, readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const TEXT = "sku,name\n0700,Größe – “Café” €5\n";
const LATIN = "sku,name\n0700,Größe Café\n";

async function zip(name: string, entries: Record<string, string | Buffer>): Promise<string> {
  const file = new yazl.ZipFile();
  for (const [entry, content] of Object.entries(entries)) file.addBuffer(Buffer.from(content), entry);
  file.end();
  const path = dir.path(name);
  const out = createWriteStream(path);
  file.outputStream.pipe(out);
  await once(out, "finish");
  return path;
}

describe("charsets", () => {
  it("decodes windows-1252 and iso-8859-1 before parsing", async () => {
    const cp = await dir.write("cp1252.csv", iconv.encode(TEXT, "windows-1252"));
    expect((await readRecords(cp, { encoding: "windows-1252" }, ["name"])).records).toEqual([{ name: "Größe – “Café” €5" }]);
    const latin = await dir.write("latin1.csv", iconv.encode(LATIN, "iso-8859-1"));
    expect((await readRecords(latin, { encoding: "ISO-8859-1" }, ["name"])).records).toEqual([{ name: "Größe Café" }]);
  });

  it("lets a BOM decide: UTF-8, UTF-16LE and UTF-16BE", async () => {
    const utf8 = await dir.write("bom8.csv", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)]));
    const out = await readRecords(utf8, { encoding: "windows-1252" }, ["sku", "name"]);
    expect(out.columns).toEqual(["sku", "name"]);
    expect(out.records).toEqual([{ sku: "0700", name: "Größe – “Café” €5" }]);

    const le = await dir.write("bom16le.csv", Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(TEXT, "utf-16le")]));
    expect((await readRecords(le, {}, ["sku", "name"])).records).toEqual([{ sku: "0700", name: "Größe – “Café” €5" }]);

    const be = await dir.write("bom16be.csv", Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(TEXT, "utf-16be")]));
    expect((await readRecords(be, {}, ["sku"])).records).toEqual([{ sku: "0700" }]);

    const noBom = await dir.write("16le.csv", iconv.encode(TEXT, "utf-16le"));
    expect((await readRecords(noBom, { encoding: "utf-16le" }, ["name"])).records).toEqual([{ name: "Größe – “Café” €5" }]);
  });

  it("keeps characters whole where the text is cut into pieces (every 32 KB of bytes)", async () => {
    // Rows of odd byte lengths with two-, three- and four-byte characters: over 300 KB, every piece boundary falls somewhere else in a row.
    const rows = Array.from({ length: 4000 }, (_, i) => `${i},Größe – “Café” €${i} 😀${"é".repeat(i % 5)}`);
    const text = `sku,name\n${rows.join("\n")}\n`;
    const expected = rows.map((r) => ({ name: r.slice(r.indexOf(",") + 1) }));
    const utf8 = await dir.write("long-utf8.csv", Buffer.from(text));
    expect((await readRecords(utf8, {}, ["name"])).records).toEqual(expected);
    const le = await dir.write("long-16le.csv", Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, "utf-16le")]));
    expect((await readRecords(le, {}, ["name"])).records).toEqual(expected);
    const gz = await dir.write("long-utf8.csv.gz", gzipSync(Buffer.from(text)));
    expect((await readRecords(gz, {}, ["name"])).records).toEqual(expected);
  });

  it("marks each record a wrong charset garbled as a row error naming the fix; clean records pass untouched", async () => {
    const body = `sku,name\n1,Plain\n2,Größe Café\n3,Other\n${Array.from({ length: 30_000 }, (_, i) => `${i + 4},row ${i}`).join("\n")}\n99,Crème\n`;
    const file = await dir.write("unlabelled-1252.csv", iconv.encode(body, "windows-1252"));
    const rows = await allRows(await openReader(file, {}));
    const bad = rows.filter((r) => r.error);
    expect(bad.map((r) => r.line)).toEqual([3, 30_005]);
    expect(bad[0]?.error).toMatch(/not valid utf-8 .*set encoding in the file config/);
    expect(rows).toHaveLength(30_004);
    // Read with its charset, nothing is marked.
    expect((await allRows(await openReader(file, { encoding: "windows-1252" }))).filter((r) => r.error)).toEqual([]);
  });

  it("does not mark a UTF-8 file that holds U+FFFD itself", async () => {
    const file = await dir.write("has-fffd.csv", "sku,name\n1,broken \uFFFD upstream\n2,Café\n");
    expect((await allRows(await openReader(file, {}))).filter((r) => r.error)).toEqual([]);
  });

  it("rejects an unknown encoding naming the field", async () => {
    const path = await dir.write("x.csv", "a\n1\n");
    await expect(openReader(path, { encoding: "klingon-8" })).rejects.toMatchObject({ code: "definition_invalid", details: { field: "encoding" } });
  });
});

describe("a web page where a feed was expected", () => {
  const page = '<!DOCTYPE html>\n<html lang="en"><head><title>Sign in\n – Supplier portal</title></head><body><form></form></body></html>\n';

  it.each([
    ["feed.csv", {}],
    ["feed.csv", { format: "csv" as const }],
    ["feed.json", {}],
    ["feed.xml", { root: "items" }],
  ])("%s %j: file_format naming the page and its title, whatever the expected format", async (name, options) => {
    const path = await dir.write(name, gzipSync(Buffer.from(page)));
    await expect(openReader(path, options)).rejects.toMatchObject({
      code: "file_format",
      message: `${name} is a web page, not a feed (its title: "Sign in – Supplier portal"): the server answered with an HTML page, such as a login, error or maintenance page`,
      hint: expect.stringMatching(/open connection\.address in a browser/),
    });
  });

  it("still reads XHTML when root asks for it, and a feed whose text merely mentions html", async () => {
    const xhtml = await dir.write("page.xml", '<html><body><item><sku>A1</sku></item></body></html>');
    expect((await readRecords(xhtml, { root: "html/body/item" }, ["sku"])).records).toEqual([{ sku: "A1" }]);
    const csv = await dir.write("notes.csv", "sku,name\n0700,<html> in a cell\n");
    expect((await readRecords(csv, {}, ["sku"])).records).toEqual([{ sku: "0700" }]);
  });
});

describe("a file with no text at all", () => {
  it.each([
    ["blank.csv", "", {}],
    ["blank.json", "\n", {}],
    ["blank.xml", "  \r\n", { root: "/feed/item" }],
    ["blank.csv.gz", gzipSync(Buffer.alloc(0)), {}],
  ])("%s: file_format saying it is empty, not a missing column or a parser's complaint", async (name, body, options) => {
    const path = await dir.write(name, body);
    await expect(openReader(path, options)).rejects.toMatchObject({ code: "file_format", message: `${name} is empty (no text at all, not even a header line)` });
  });

  it("is an empty feed where the format says 'no records' that way: fixed width, CSV with configured headers", async () => {
    const path = await dir.write("blank.txt", "");
    expect(await allRows(await openReader(path, { format: "fixed" }))).toEqual([]);
    expect(await allRows(await openReader(path, { headers: ["sku", "qty"] }))).toEqual([]);
  });
});

describe("compressed files", () => {
  it("gunzips by magic bytes whatever the name", async () => {
    const path = await dir.write("feed.csv", gzipSync(Buffer.from(TEXT)));
    expect((await readRecords(path, {}, ["name"])).records).toEqual([{ name: "Größe – “Café” €5" }]);
    const json = await dir.write("feed.json.gz", gzipSync(Buffer.from('[{"sku":"0700"}]')));
    expect((await readRecords(json, {}, ["sku"])).records).toEqual([{ sku: "0700" }]);
  });

  it("reads the only entry of a zip, gzip inside included", async () => {
    const path = await zip("one.zip", { "data/feed.csv.gz": gzipSync(Buffer.from(TEXT)) });
    expect((await readRecords(path, {}, ["sku"])).records).toEqual([{ sku: "0700" }]);
  });

  it("reads the entries that match name, in order, saying which entry each row came from", async () => {
    const path = await zip("many.zip", {
      "readme.txt": "not data",
      "stock_1.csv": "sku,qty\nA,1\n",
      "sub/stock_2.csv": "sku,qty\nB,2\nC,3\n",
    });
    const reader = await openReader(path, { name: "stock_\\d+\\.csv" });
    const sku = reader.accessor("sku");
    const rows = await allRows(reader);
    expect(rows.map((r) => [r.entry, r.line, sku?.(r)])).toEqual([
      ["stock_1.csv", 2, "A"],
      ["sub/stock_2.csv", 2, "B"],
      ["sub/stock_2.csv", 3, "C"],
    ]);
  });

  it("fails naming the entries when none matches and there are several", async () => {
    const path = await zip("nomatch.zip", { "a.csv": "x\n1\n", "b.csv": "x\n2\n" });
    await expect(openReader(path, { name: "/STOCK.*/i" })).rejects.toMatchObject({
      code: "file_missing",
      message: expect.stringContaining("a.csv, b.csv"),
    });
  });

  it("refuses entries whose headers differ", async () => {
    const path = await zip("differ.zip", { "a.csv": "sku,qty\nA,1\n", "b.csv": "qty,sku\n2,B\n" });
    const reader = await openReader(path, {});
    await expect(allRows(reader)).rejects.toMatchObject({ code: "header_mismatch" });
  });

  it("cleans entry names of .. and leading slashes", async () => {
    const { cleanEntryName } = await import("../../src/formats/zip.js");
    expect(cleanEntryName("../../etc/passwd")).toBe("etc/passwd");
    expect(cleanEntryName("/abs\\win\\file.csv")).toBe("abs/win/file.csv");
  });
});
