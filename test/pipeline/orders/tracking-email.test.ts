import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ImapFlow } from "imapflow";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAutomationFile, type Automation } from "../../../src/definition/index.js";
import type { Order } from "../../../src/service/index.js";
import { DovecotServer } from "../../helpers/dovecot.js";
import { allOrders, openOrderEnv, orderByNumber, readDebug, run, runLogs, seedOrder, type OrderEnv } from "./order-env.js";

/**
 * samples/tracking-email.json, unchanged but for its parameters, against a
 * real IMAP server (Dovecot): the 3PL mails tracking_20260301.csv; the run
 * adds one shipment per order and marks it shipped; the same file mailed
 * again changes nothing.
 */
const SAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../samples");
const USER = { username: "orders", password: "imap-Tracking-pw-808" };
const SENDER = "noreply@keystone-3pl.test";
const dovecot = new DovecotServer([USER]);
type Shipment = Record<string, string>;
const shipmentsOf = (o: Order): Shipment[] => (o.shipments as Shipment[] | undefined) ?? [];

async function mailTrackingFile(subject: string): Promise<void> {
  const content = (await readFile(path.join(SAMPLES, "files/tracking/tracking_20260301.csv"), "utf8")).replace(/\r?\n/g, "\r\n");
  // base64, as mail clients send attachments: its listed size is an estimate the fetch stage must accept.
  const encoded = Buffer.from(content).toString("base64").replace(/.{76}/g, "$&\r\n");
  const attachment = `Content-Type: text/csv; name=tracking_20260301.csv\r\nContent-Disposition: attachment; filename=tracking_20260301.csv\r\nContent-Transfer-Encoding: base64\r\n\r\n${encoded}`;
  const sent = new Date(Date.now() - 3_600_000);
  const raw = await new Promise<Buffer>((resolve, reject) =>
    nodemailer
      .createTransport({ streamTransport: true, buffer: true })
      .sendMail({ from: SENDER, to: "orders@merchant.test", subject, date: sent, text: "Tracking numbers of today's pick wave.", attachments: [{ raw: attachment }] }, (err, info) =>
        err ? reject(err) : resolve(info.message as Buffer),
      ),
  );
  const client = new ImapFlow({ host: "127.0.0.1", port: dovecot.port, secure: false, auth: { user: USER.username, pass: USER.password }, logger: false });
  client.on("error", () => undefined);
  await client.connect();
  try {
    // An hour-old internal date: min_age (30 s by default) must not hold the attachment back.
    await client.append("INBOX", raw, [], sent);
  } finally {
    await client.logout();
  }
}

describe("samples/tracking-email.json over IMAP", () => {
  let env: OrderEnv;
  let sample: Automation;

  beforeAll(async () => {
    await dovecot.start();
    env = await openOrderEnv();
    sample = await loadAutomationFile(path.join(SAMPLES, "tracking-email.json"));
    const params: Record<string, string> = { "imap host": "127.0.0.1", "imap port": String(dovecot.port), "imap user": USER.username, "imap password": USER.password, "sender address": SENDER };
    for (const p of sample.parameters) if (params[p.name] !== undefined) p.value = params[p.name] ?? null;
    await seedOrder(env, { ordernumber: "WEB-100231", channel: "web", total: "48.00", shippingstatus: "INCOMPLETE", items: [{ sku: "HC-12", quantity: "2" }] });
    await seedOrder(env, { ordernumber: "WEB-100232", channel: "web", total: "12.50", items: [{ sku: "GL-1", quantity: "1" }] });
    await seedOrder(env, { ordernumber: "AMZ-114-5521337-0091230", channel: "amazon", total: "129.00", items: [{ sku: "DR-480", quantity: "1" }] });
    // WEB-100240 is in the file but not in the service: the sample has no create, so it is skipped.
    await mailTrackingFile("Tracking 2026-03-01");
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await dovecot.stop();
  });

  it("debug run: plans a shipment and shippingstatus COMPLETE per known order, writes the body, changes nothing", async () => {
    const before = await allOrders(env);
    const record = await run(env, sample, "debug");
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ rows: 4, row_errors: 0, update: 3, skipped: 1, unchanged: 0, create: 0 });
    expect(record.requests.write).toBe(0);
    expect(await allOrders(env)).toEqual(before);

    const plan = await readDebug(env, record, "plan.csv");
    expect(plan).toContain("update,update,WEB-100231,shippingstatus,INCOMPLETE,COMPLETE");
    expect(plan).toContain("update,update,WEB-100231,shipments[1].shiptracking,,1Z999AA10123456784");
    expect(plan).toContain("update,update,AMZ-114-5521337-0091230,shipments[1].shipcarrier,,FEDEX");
    expect(plan).toContain(`skipped,,WEB-100240,,,"the service has no such order, and the file config has no create"`);

    const body = JSON.parse(await readDebug(env, record, "bulk-1.json")) as { header: string[]; data: string[][] };
    expect([...body.header].sort()).toEqual(["oid", "shipments.shipcarrier", "shipments.shipdate", "shipments.shipservice", "shipments.shiptracking", "shippingstatus"]);
    const rows = body.data.map((row) => Object.fromEntries(body.header.map((h, i) => [h, row[i]])));
    const amz = await orderByNumber(env, "AMZ-114-5521337-0091230");
    expect(rows).toContainEqual({
      oid: amz.oid,
      shippingstatus: "COMPLETE",
      "shipments.shiptracking": "794644790132",
      "shipments.shipcarrier": "FEDEX",
      "shipments.shipservice": "Home Delivery",
      "shipments.shipdate": "2026-03-01",
    });
    expect(rows).toHaveLength(3);
  });

  it("live run: adds the shipments, marks the orders shipped, logs an update per order and a skip", async () => {
    const record = await run(env, sample, "prod");
    expect(record.error).toBeNull();
    expect(record.outcome).toBe("success");
    expect(record.counts).toMatchObject({ rows: 4, update: 3, skipped: 1, failed: 0 });
    expect(record.requests.write).toBe(1);
    const web = await orderByNumber(env, "WEB-100231");
    expect(web.shippingstatus).toBe("COMPLETE");
    expect(shipmentsOf(web).map((s) => [s.shiptracking, s.shipcarrier, s.shipservice, s.shipdate])).toEqual([["1Z999AA10123456784", "UPS", "Ground", "2026-03-01"]]);
    expect(shipmentsOf(await orderByNumber(env, "WEB-100232")).map((s) => s.shipcarrier)).toEqual(["USPS"]);
    expect((await orderByNumber(env, "AMZ-114-5521337-0091230")).shippingstatus).toBe("COMPLETE");
    const logs = await runLogs(env, record.id);
    expect(logs.map((l) => [l.identifier, l.action, l.result]).sort()).toEqual([
      ["AMZ-114-5521337-0091230", "update", "success"],
      ["WEB-100231", "update", "success"],
      ["WEB-100232", "update", "success"],
      ["WEB-100240", "skip", "warning"],
    ]);
  });

  it("the same file mailed again: every order unchanged, no write, each shipment once", async () => {
    await mailTrackingFile("Tracking 2026-03-01 (resent)");
    const record = await run(env, sample, "prod");
    expect(record.error).toBeNull();
    expect(record.files.map((f) => f.name)).toEqual(["tracking_20260301.csv"]);
    expect(record.counts).toMatchObject({ rows: 4, update: 0, unchanged: 3, skipped: 1 });
    expect(record.requests.write).toBe(0);
    for (const n of ["WEB-100231", "WEB-100232", "AMZ-114-5521337-0091230"]) expect(shipmentsOf(await orderByNumber(env, n))).toHaveLength(1);
  });

  it("the IMAP password is in no file the runs wrote", async () => {
    const runs = path.join(env.settings.dataDir, "runs");
    for (const id of await readdir(runs)) {
      for (const name of await readdir(path.join(runs, id, "debug"), { recursive: true })) {
        const file = path.join(runs, id, "debug", name);
        const text = await readFile(file).catch(() => Buffer.alloc(0));
        expect(text.includes(Buffer.from(USER.password)), file).toBe(false);
      }
    }
  });
});
