import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openReader } from "../../src/formats/index.js";
import { allRows, expectNoRecords, readRecords, tempDir, type TempDir } from "./helpers.js";

let dir: TempDir;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const FEED = `<?xml version="1.0" encoding="UTF-8"?>
<feed>
  <item id="A1" status="new">
    <sku>0700</sku>
    <title>Caf&#233; &amp; bar</title>
    <price currency="EUR">
      <amount>9.90</amount>
    </price>
    <image>a.jpg</image>
    <image>b.jpg</image>
    <note><![CDATA[<b>bold</b>]]></note>
    <blank></blank>
  </item>
  <item id="A2"><sku>0701</sku><title> padded </title></item>
</feed>`;

describe("XML reader", () => {
  it("takes the children of the root element by default, with child names and @attributes", async () => {
    const path = await dir.write("feed.xml", FEED);
    const reader = await openReader(path, {});
    expect(reader.format).toBe("xml");
    expect(await reader.columns()).toEqual(["@id", "@status", "sku", "title", "price", "image", "note", "blank"]);
    const fields = ["@id", "SKU", "title", "price", "image", "note", "blank", "@status"].map((f) => reader.accessor(f));
    const rows = await allRows(reader);
    expect(rows.map((r) => r.line)).toEqual([1, 2]);
    expect(rows.map((r) => fields.map((get) => get?.(r)))).toEqual([
      ["A1", "0700", "Café & bar", "9.90", "a.jpg,b.jpg", "<b>bold</b>", "", "new"],
      ["A2", "0701", " padded ", undefined, undefined, undefined, undefined, undefined],
    ]);
    expect(reader.accessor("weight")).toBeNull();
  });

  it("follows root as an element path or //name", async () => {
    const path = await dir.write(
      "nested.xml",
      "<export><meta><item><sku>no</sku></item></meta><catalog><products><product><sku>P1</sku></product><product><sku>P2</sku></product></products></catalog></export>",
    );
    expect((await readRecords(path, { root: "/export/catalog/products/product" }, ["sku"])).records).toEqual([{ sku: "P1" }, { sku: "P2" }]);
    expect((await readRecords(path, { root: "//product" }, ["sku"])).records).toEqual([{ sku: "P1" }, { sku: "P2" }]);
    expect((await readRecords(path, { root: "export/meta/item" }, ["sku"])).records).toEqual([{ sku: "no" }]);
  });

  it("runs XPath on one record at a time, namespaces of the ancestors included", async () => {
    const path = await dir.write(
      "ns.xml",
      `<rss xmlns:g="http://base.google.com/ns/1.0"><channel>
        <item><g:id>0700</g:id><title>T1</title><g:price currency="EUR">5.00</g:price><tag>x</tag><tag>y</tag></item>
        <item><g:id>0701</g:id><title>T2</title></item>
      </channel></rss>`,
    );
    const reader = await openReader(path, { xpath: true, root: "/rss/channel/item" });
    const id = reader.accessor("g:id");
    const price = reader.accessor("g:price/@currency");
    const tag = reader.accessor("tag");
    const count = reader.accessor("count(tag)");
    const concat = reader.accessor("concat(title, '-', g:id)");
    expect(reader.accessor("nothing/here")).toBeNull();
    expect(() => reader.accessor("((")).toThrow(/not a valid XPath/);
    const rows = await allRows(reader);
    expect(rows.map((r) => [id?.(r), price?.(r), tag?.(r), count?.(r), concat?.(r)])).toEqual([
      ["0700", "EUR", "x", "2", "T1-0700"],
      ["0701", undefined, undefined, "0", "T2-0701"],
    ]);
  });

  it("lets unprefixed XPath names match a default namespace", async () => {
    const path = await dir.write("atom.xml", '<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>e1</id></entry></feed>');
    expect((await readRecords(path, { xpath: true }, ["id"])).records).toEqual([{ id: "e1" }]);
  });

  it("reads an empty list of records as no rows, not as a file without the mapped fields", async () => {
    await expectNoRecords(dir, [["empty.xml", "<feed></feed>", undefined], ["empty-root.xml", "<feed><items/></feed>", "/feed/items/item"]]);
  });

  it("quotes what the file holds when root is not in it: often the server's error answer", async () => {
    const path = await dir.write("denied.xml", '<?xml version="1.0"?>\n<error>\n  <message>Invalid key</message>\n</error>');
    await expect(openReader(path, { root: "/feed/item" })).rejects.toMatchObject({
      code: "file_format",
      message: 'The XML file has nothing at root "/feed/item": it begins <?xml version="1.0"?> <error> <message>Invalid key</message> </error>',
      details: { field: "root" },
    });
    // A //name root can match nothing in a valid file: that is an empty feed.
    expect(await allRows(await openReader(path, { root: "//item" }))).toEqual([]);
  });

  it("reports malformed XML with its position", async () => {
    const path = await dir.write("bad.xml", "<feed><item><sku>1</item></feed>");
    await expect(openReader(path, {}).then(allRows)).rejects.toMatchObject({ code: "file_format", message: expect.stringMatching(/well-formed/) });
  });

  it("streams many records", async () => {
    const parts = ["<feed>"];
    for (let i = 0; i < 20_000; i++) parts.push(`<item><sku>${String(i).padStart(6, "0")}</sku></item>\n`);
    parts.push("</feed>");
    const path = await dir.write("large.xml", parts.join(""));
    const { records } = await readRecords(path, {}, ["sku"]);
    expect(records.length).toBe(20_000);
    expect(records[19_999]).toEqual({ sku: "019999" });
  });
});
