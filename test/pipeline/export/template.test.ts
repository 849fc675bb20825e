import { readFile } from "node:fs/promises";
import path from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSmtpPools } from "../../../connectors/smtp-pool.js";
import { SmtpCapture } from "../../helpers/smtp-capture.js";
import type { Order } from "../../../src/service/index.js";
import { FeedServer } from "../../helpers/http-feed-server.js";
import { loadSample } from "../../samples/sample-env.js";
import { automation, createOrders, debugSource, listing, openExportEnv, putProducts, run, type ExportEnv } from "./export-env.js";

/**
 * Exports through a `template`: a Google-Shopping-style RSS feed to storage
 * (sdsftp) parsed back by an XML parser, one XML request per record to a
 * partner on loopback (a refused record makes the run partial and is the only
 * one sent again), a JSON order push with the order's nested items, and an
 * e-mail whose body is the render.
 */
const HOSTILE = `Tom & "Jerry" <b>'s</b>\nnew line 🚀`;
const PRODUCTS = Array.from({ length: 5 }, (_, i) => ({ guid: `G${i}`, sku: `S${i}`, title: i === 2 ? HOSTILE : `Part ${i}`, price: `${i}.50` }));

const RSS = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">
<channel>
  <title>{{ params.shop|e('xml') }}</title>
{% for p in data %}
  <item n="{{ loop.index }}">
    <g:id>{{ p.id|e('xml') }}</g:id>
    <title>{{ p.title|e('xml') }}</title>
    <g:price>{{ p.price|number_format(2, '.', '') }} EUR</g:price>
  </item>
{% endfor %}
</channel>
</rss>
`;

function parseXml(text: string): Document {
  return new DOMParser({ onError: (level, msg) => { throw new Error(`${level}: ${msg}`); } }).parseFromString(text, "text/xml") as unknown as Document;
}

describe("template exports", () => {
  let env: ExportEnv;
  let partner: FeedServer;
  const smtp = new SmtpCapture("smtp-Export-pw-31");
  const mails = smtp.mails;
  let refuse = "S3";

  beforeAll(async () => {
    env = await openExportEnv();
    putProducts(env, PRODUCTS);
    partner = new FeedServer();
    partner.json("/items", (req) => {
      const sku = /<sku>(.*?)<\/sku>/.exec(req.body.toString())?.[1];
      return sku === refuse ? { status: 500, body: { error: "database busy" } } : { body: { ok: true } };
    });
    partner.json("/orders", () => ({ body: { ok: true } }));
    await partner.start();
    await smtp.start();
    env.worker.env.settings.smtpUrl = smtp.url("exports@shop.test");
  });

  afterAll(async () => {
    closeSmtpPools();
    await smtp.close();
    await partner.stop();
    await env.close();
  });

  const feed = () =>
    automation({
      name: "Shopping feed",
      connection: { type: "sdsftp", path: "feeds" },
      parameters: [{ name: "shop", value: "Acme & Sons" }],
      file_configs: [{ name: "shopping.xml", field_map: { sku: "id", title: "title", price: "price" }, template: RSS }],
    });

  it("an RSS feed to storage: parsed back, hostile text intact, one item per product", async () => {
    const r = await run(env, feed());
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    expect(r.counts).toMatchObject({ rows: 5, create: 5, failed: 0 });
    const dir = path.join(env.storageRoot, "feeds");
    expect(await listing(dir)).toEqual(["shopping.xml"]);
    const doc = parseXml(await readFile(path.join(dir, "shopping.xml"), "utf8"));
    expect(doc.getElementsByTagName("title")[0]?.textContent).toBe("Acme & Sons");
    const items = Array.from(doc.getElementsByTagName("item"));
    expect(items.map((i) => i.getElementsByTagName("g:id")[0]?.textContent)).toEqual(PRODUCTS.map((p) => p.sku));
    expect(items.map((i) => i.getAttribute("n"))).toEqual(["1", "2", "3", "4", "5"]);
    expect(items[2]?.getElementsByTagName("title")[0]?.textContent).toBe(HOSTILE);
    expect(items[1]?.getElementsByTagName("g:price")[0]?.textContent).toBe("1.50 EUR");
  });

  it("a debug run keeps the render in the debug files and delivers nothing", async () => {
    const r = await run(env, { ...feed(), slug: "shopping-feed-debug" }, { mode: "debug", key: "shopping-feed-debug" });
    expect(r.outcome).toBe("success");
    const text = await readFile(debugSource(env, r, "shopping.xml"), "utf8");
    expect(Array.from(parseXml(text).getElementsByTagName("item"))).toHaveLength(5);
  });

  it("a template that fails at run time fails the run naming the field", async () => {
    const a = automation({ connection: { type: "sdsftp", path: "broken" }, file_configs: [{ name: "x.txt", field_map: { sku: "sku" }, template: "{% for p in data %}{{ p.sku|date('Y') }}{% endfor %}" }] });
    const r = await run(env, a);
    expect(r.outcome).toBe("failed");
    expect(r.error?.code).toBe("template");
    expect(r.error?.message).toMatch(/^file_configs\[0\]\.template: date: "S0" is not a date/);
    expect(await listing(path.join(env.storageRoot, "broken"))).toEqual([]);
  });

  it("payload_multi 0 over http: one XML request per record; a refused one makes the run partial and is the only one sent again", async () => {
    const a = automation({
      name: "Item push",
      connection: { type: "http", address: `${partner.base}/items` },
      file_configs: [{ field_map: { sku: "sku", title: "title" }, payload_multi: 0, template: "<item><sku>{{ data.sku|e('xml') }}</sku><title>{{ data.title|e('xml') }}</title></item>" }],
    });
    const posted = () => partner.seen.filter((s) => s.url === "/items" && s.method === "POST");
    const r = await run(env, a, { diff: true });
    expect(r.outcome).toBe("partial");
    expect(r.counts).toMatchObject({ rows: 5, create: 5, failed: 1 });
    const bodies = posted().map((s) => s.body.toString());
    expect(posted().every((s) => s.headers["content-type"] === "application/xml")).toBe(true);
    const delivered = bodies.map((b) => parseXml(b)).map((d) => [d.getElementsByTagName("sku")[0]?.textContent, d.getElementsByTagName("title")[0]?.textContent]);
    expect(delivered.filter(([sku]) => sku !== "S3")).toEqual(PRODUCTS.filter((p) => p.sku !== "S3").map((p) => [p.sku, p.title]));
    const logs = await env.worker.env.store.searchLogs({ account: env.worker.env.account, job_id: r.id, operation: "export" });
    expect(logs.logs.filter((l) => l.result === "error").map((l) => l.identifier)).toEqual(["G3"]);
    const mine = logs.logs.filter((l) => l.job_id === r.id);
    expect(mine.filter((l) => l.result === "success")).toHaveLength(4);

    refuse = "";
    partner.seen.length = 0;
    const next = await run(env, a, { diff: true });
    expect(next.outcome).toBe("success");
    expect(next.counts).toMatchObject({ create: 1, unchanged: 4, failed: 0 });
    expect(posted().map((s) => s.body.toString())).toEqual(["<item><sku>S3</sku><title>Part 3</title></item>"]);
  });

  it("an order pushed as JSON, one request per order, with its nested items; the connection's content-type wins", async () => {
    const order: Order = {
      ordernumber: "1001",
      channel: "shop",
      dateutc: "2026-03-01 10:00:00",
      total: "30.00",
      paymentstatus: "COMPLETE",
      shipping: { firstname: "Ada", lastname: `O'Neil "the" <first>`, city: "London", country: "GB" },
      items: [
        { sku: "P1", title: "Widget, large", price: "10.00", quantity: "2" },
        { sku: "P2", title: "Gadget\nnew", price: "5.00", quantity: "2" },
      ],
    };
    await createOrders(env, [order]);
    const template = `{"number": {{ data.number|json_encode }}, "name": {{ (data.shipping.firstname ~ ' ' ~ data.shipping.lastname)|json_encode }}, "lines": [{% for it in data.items %}{"sku": {{ it.sku|json_encode }}, "qty": {{ it.quantity }}, "title": {{ it.title|json_encode }}}{% if not loop.last %},{% endif %}{% endfor %}]}`;
    const a = automation({
      name: "Order push",
      type: "orders",
      connection: { type: "http", address: `${partner.base}/orders`, headers: { "Content-Type": "application/vnd.partner+json" } },
      file_configs: [{ field_map: { oid: "oid", ordernumber: "number" }, payload_multi: 0, template }],
    });
    const r = await run(env, a);
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    const sent = partner.seen.filter((s) => s.url === "/orders");
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers["content-type"]).toBe("application/vnd.partner+json");
    expect(JSON.parse(sent[0]?.body.toString() ?? "")).toEqual({
      number: "1001",
      name: `Ada O'Neil "the" <first>`,
      lines: [
        { sku: "P1", qty: 2, title: "Widget, large" },
        { sku: "P2", qty: 2, title: "Gadget\nnew" },
      ],
    });
  });

  it("e-mail: the render is the message body, nothing attached", async () => {
    const a = automation({
      name: "Mailed list",
      connection: { type: "email", address: ["buyer@partner.test"], subject: "Stock" },
      file_configs: [{ name: "stock.txt", field_map: { sku: "sku", price: "price" }, template: "Stock today:\n{% for p in data %}- {{ p.sku }}: {{ p.price }}\n{% endfor %}" }],
    });
    const r = await run(env, a);
    expect(r.error).toBeNull();
    const mail = mails[mails.length - 1];
    if (!mail) throw new Error("no mail received");
    expect(mail.attachments).toHaveLength(0);
    expect(mail.text).toBe(`Stock today:\n${PRODUCTS.map((p) => `- ${p.sku}: ${p.price}\n`).join("")}`);
  });

  // Last: its products would join the other tests' selections.
  it("samples/shopping-feed-storage.json: the active products as RSS items, parsed back", async () => {
    putProducts(env, [
      { guid: "bn-1", sku: "0001", title: `Hose clamp 1/2" & <more>`, brand: "Bolt & Nut", price: "5.9", stock: "12", upc: "0123456789012", status: "Active" },
      { guid: "bn-2", sku: "0002", title: "Drill", brand: "Bolt & Nut", price: "99", stock: "0", status: "Active" },
      { guid: "bn-3", sku: "0003", title: "Old drill", brand: "Bolt & Nut", price: "9", stock: "1", status: "Ended" },
    ]);
    const r = await run(env, await loadSample("shopping-feed-storage.json"));
    expect(r.error).toBeNull();
    expect(r.counts).toMatchObject({ rows: 2, create: 2 });
    const doc = parseXml(await readFile(path.join(env.storageRoot, "exports", "shopping", "shopping-feed.xml"), "utf8"));
    expect(doc.getElementsByTagName("title")[0]?.textContent).toBe("Bolt & Nut Hardware");
    const items = Array.from(doc.getElementsByTagName("item")).map((i) => Object.fromEntries(Array.from(i.childNodes).filter((n) => n.nodeType === 1).map((n) => [n.nodeName, n.textContent])));
    expect(items).toEqual([
      { "g:id": "0001", title: `Hose clamp 1/2" & <more>`, link: "https://shop.example.com/p/0001", "g:brand": "Bolt & Nut", "g:price": "5.90 EUR", "g:availability": "in_stock", "g:gtin": "0123456789012" },
      { "g:id": "0002", title: "Drill", link: "https://shop.example.com/p/0002", "g:brand": "Bolt & Nut", "g:price": "99.00 EUR", "g:availability": "out_of_stock" },
    ]);
  });
});
