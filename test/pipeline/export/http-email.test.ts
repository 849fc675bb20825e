import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeSmtpPools } from "../../../connectors/smtp-pool.js";
import { SmtpCapture } from "../../helpers/smtp-capture.js";
import { FeedServer } from "../../helpers/http-feed-server.js";
import { filesContaining } from "../../samples/sample-env.js";
import { automation, openExportEnv, putProducts, readBack, run, type ExportEnv } from "./export-env.js";

/**
 * Exports to a partner's http API (all records in one request, or one
 * request per record with per-record results) and by e-mail, against a real
 * node:http server and a real SMTP server on loopback.
 */
const PASSWORD = "partner-api-Pw-4417";
const PRODUCTS = Array.from({ length: 6 }, (_, i) => ({ guid: `G${i}`, sku: `S${i}`, title: `Part ${i}`, price: `${i}.50` }));
const RECORDS = PRODUCTS.map((p) => ({ sku: p.sku, name: p.title, price: p.price }));

describe("http and e-mail exports", () => {
  let env: ExportEnv;
  let partner: FeedServer;
  const smtp = new SmtpCapture("smtp-Export-pw-31");
  const mails = smtp.mails;
  let refuse = "S3";

  beforeAll(async () => {
    env = await openExportEnv();
    putProducts(env, PRODUCTS);
    partner = new FeedServer();
    partner.json("/records", (req) => {
      const record = JSON.parse(req.body.toString()) as Record<string, string>;
      return record.sku === refuse ? { status: 500, body: { error: "database busy" } } : { body: { ok: true } };
    });
    partner.json("/feed", () => ({ body: { received: true } }));
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

  const httpExport = (route: string, fileConfig: Record<string, unknown>) =>
    automation({
      name: `Partner API ${route}`,
      connection: { type: "http", address: `${partner.base}${route}`, username: "shop", password: PASSWORD },
      file_configs: [{ field_map: { sku: "sku", title: "name", price: "price" }, ...fileConfig }],
    });
  const posted = (route: string) => partner.seen.filter((s) => s.url === route && s.method === "POST");

  it("payload_multi 0: one request per record; the record the partner refuses fails, the others are delivered: partial", async () => {
    const a = httpExport("/records", { name: "records.json", payload_multi: 0 });
    const dry = await run(env, a, { mode: "debug", diff: true });
    expect(dry.counts).toMatchObject({ rows: 6, create: 6 });
    expect(posted("/records")).toHaveLength(0);

    const r = await run(env, a, { diff: true });
    expect(r.outcome).toBe("partial");
    expect(r.counts).toMatchObject({ rows: 6, create: 6, failed: 1 });
    const bodies = posted("/records").map((s) => JSON.parse(s.body.toString()) as Record<string, string>);
    // The refused record was tried again (5xx is retried) before it was given up.
    expect(bodies.filter((b) => b.sku === "S3").length).toBeGreaterThan(1);
    expect(bodies.filter((b) => b.sku !== "S3")).toEqual(RECORDS.filter((b) => b.sku !== "S3"));
    expect(posted("/records").every((s) => s.headers.authorization === `Basic ${Buffer.from(`shop:${PASSWORD}`).toString("base64")}`)).toBe(true);
    const logs = await env.worker.env.store.searchLogs({ account: env.worker.env.account, job_id: r.id, operation: "export" });
    expect(logs.logs.filter((l) => l.result === "error").map((l) => l.identifier)).toEqual(["G3"]);
    expect(logs.logs.filter((l) => l.result === "success")).toHaveLength(5);
    expect(JSON.stringify(logs.logs)).toContain("database busy");

    // The failed record stays out of the snapshot: the next diff run sends it, and only it.
    refuse = "";
    partner.seen.length = 0;
    const next = await run(env, a, { diff: true });
    expect(next.outcome).toBe("success");
    expect(next.counts).toMatchObject({ create: 1, unchanged: 5, failed: 0 });
    expect(posted("/records").map((s) => JSON.parse(s.body.toString()) as unknown)).toEqual([RECORDS[3]]);
    expect(await filesContaining(env.dir, PASSWORD)).toEqual([]);
  });

  it("payload_multi 1: all records in one request, the rendered JSON array", async () => {
    partner.seen.length = 0;
    const r = await run(env, httpExport("/feed", { name: "feed.json" }));
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    const [request] = posted("/feed");
    expect(posted("/feed")).toHaveLength(1);
    expect(request?.headers["content-type"]).toContain("json");
    expect(JSON.parse(request?.body.toString() ?? "")).toEqual(RECORDS);
  });

  it("e-mail: one message to the recipients with the file attached", async () => {
    const a = automation({
      name: "Mailed stock list",
      connection: { type: "email", address: ["buyer@partner.test", "ops@partner.test"], subject: "Stock list {{DATE}}" },
      file_configs: [{ name: "stock.csv", field_map: { sku: "sku", title: "name", price: "price" } }],
    });
    const r = await run(env, a);
    expect(r.error).toBeNull();
    expect(r.outcome).toBe("success");
    expect(mails).toHaveLength(1);
    const mail = mails[0];
    if (!mail) throw new Error("no mail received");
    expect(mail.subject).toBe(`Stock list ${new Date().toISOString().slice(0, 10)}`);
    const attachment = mail.attachments[0];
    expect(attachment?.filename).toBe("stock.csv");
    const dir = await mkdtemp(path.join(tmpdir(), "conveyor-mail-"));
    try {
      await writeFile(path.join(dir, "stock.csv"), attachment?.content ?? Buffer.alloc(0));
      expect(await readBack(path.join(dir, "stock.csv"))).toEqual(RECORDS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // No body given: the run's summary, not the file name.
    expect(mail.text?.trim()).toBe(`stock.csv: ${RECORDS.length} records exported by Mailed stock list, run ${r.id}.`);
    // Every record of the delivered file has its log record.
    const logs = await env.worker.env.store.searchLogs({ account: env.worker.env.account, job_id: r.id, operation: "export" });
    expect(logs.logs.filter((l) => l.job_id === r.id && l.action === "export" && l.result === "success")).toHaveLength(RECORDS.length);
  });

  it("e-mail without subject or body: the automation's name and the run's summary", async () => {
    mails.length = 0;
    const a = automation({
      name: "Nightly partner list",
      connection: { type: "email", address: "buyer@partner.test" },
      file_configs: [{ name: "list.csv", field_map: { sku: "sku" } }],
    });
    const r = await run(env, a);
    expect(r.outcome).toBe("success");
    const mail = mails[0];
    if (!mail) throw new Error("no mail received");
    expect(mail.subject).toBe("Nightly partner list");
    expect(mail.text).toContain(`exported by Nightly partner list, run ${r.id}`);
  });
});
