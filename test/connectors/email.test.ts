import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import nodemailer from "nodemailer";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmailConnector } from "../../connectors/email.js";
import { closeSmtpPools } from "../../connectors/smtp-pool.js";
import type { ConnectionConfig, RemoteFile } from "../../connectors/types.js";
import { DovecotServer } from "../helpers/dovecot.js";
import { memoryContext, type TestContext } from "../helpers/memory-context.js";
import { caught } from "../helpers/caught.js";

const USER = { username: "buyer", password: "imap-secret-pass-31" };
const dovecot = new DovecotServer([USER]);
const work = mkdtempSync(path.join(tmpdir(), "conveyor-email-"));
const fast = { retryBaseDelayMs: 10, timeoutMs: 5_000 };

beforeAll(() => dovecot.start(), 30_000);
afterAll(async () => {
  closeSmtpPools();
  await dovecot.stop();
});


/** A real IMAP client to play the supplier and the person reading the mailbox. */
async function mailbox<T>(fn: (c: ImapFlow) => Promise<T>): Promise<T> {
  const c = new ImapFlow({ host: "127.0.0.1", port: dovecot.port, secure: false, auth: { user: USER.username, pass: USER.password }, logger: false });
  c.on("error", () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.logout();
  }
}

/** Builds a real MIME message with nodemailer and APPENDs it over IMAP. */
async function deliver(folder: string, from: string, subject: string, files: Array<{ filename: string; content: string }>, seen = false): Promise<number> {
  const raw = await new Promise<Buffer>((resolve, reject) =>
    nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail({ from, to: "buyer@test", subject, text: "see attached", attachments: files }, (err, info) =>
      err ? reject(err) : resolve(info.message as Buffer),
    ),
  );
  const res = await mailbox((c) => c.append(folder, raw, seen ? ["\\Seen"] : []));
  if (!res || !res.uid) throw new Error("append gave no uid");
  return res.uid;
}

function imapConn(extra: Partial<ConnectionConfig> = {}): ConnectionConfig {
  return { type: "email", address: "127.0.0.1", port: dovecot.port, username: USER.username, password: USER.password, ...extra };
}

async function runOnce(c: EmailConnector, ctx: TestContext, nameRe: RegExp): Promise<string[]> {
  const read: string[] = [];
  for (const file of (await c.list()).filter((f) => nameRe.test(f.name))) {
    const local = path.join(work, `${Math.random()}-${file.name}`);
    await c.download(file, local);
    read.push(`${file.name}=${readFileSync(local, "utf8")}`);
    await c.markProcessed(file);
  }
  void ctx;
  return read;
}

describe("email import over IMAP (Dovecot)", () => {
  it("reads matching attachments once, even when a person opened the message first", async () => {
    await mailbox((c) => c.mailboxCreate("Feeds"));
    await deliver("Feeds", "supplier@vendor.test", "Stock 1", [{ filename: "stock_001.csv", content: "sku,qty\nA,1\n" }, { filename: "notes.txt", content: "hello" }]);
    await deliver("Feeds", "spam@other.test", "Stock spam", [{ filename: "stock_999.csv", content: "evil" }]);
    // Already read by a person: \Seen must not hide it from the import.
    await deliver("Feeds", "supplier@vendor.test", "Stock 2", [{ filename: "../../etc/stock_002.csv", content: "sku,qty\nB,2\n" }], true);
    const ctx = memoryContext({}, {});
    const c = new EmailConnector(imapConn({ folder: "Feeds", email_search: { from: "supplier@vendor.test" } }), ctx, fast);
    const listed = await c.list();
    expect(listed.map((f) => f.name)).toEqual(["stock_001.csv", "notes.txt", "stock_002.csv"]);
    expect(listed[0]?.ref).toMatch(/^\d+:\d+:[\d.]+$/);
    expect(await runOnce(c, ctx, /^stock_\d+\.csv$/)).toEqual(["stock_001.csv=sku,qty\nA,1\n", "stock_002.csv=sku,qty\nB,2\n"]);
    expect(ctx.metadata.values.get("imap")).toMatchObject({ lastUid: 3 });
    // The second run finds nothing new.
    expect(await c.list()).toEqual([]);
    const flags = await mailbox(async (m) => {
      await m.mailboxOpen("Feeds");
      return (await m.fetchAll("1:*", { uid: true, flags: true }, { uid: true })).map((msg) => [msg.uid, msg.flags?.has("\\Seen")]);
    });
    expect(flags).toEqual([
      [1, true],
      [2, false],
      [3, true],
    ]);
    // A new message after the checkpoint is read, alone.
    await deliver("Feeds", "supplier@vendor.test", "Stock 3", [{ filename: "stock_003.csv", content: "C" }]);
    expect(await runOnce(c, ctx, /^stock_\d+\.csv$/)).toEqual(["stock_003.csv=C"]);
  });

  it("starts over when the mailbox's UIDVALIDITY changed", async () => {
    await mailbox((c) => c.mailboxCreate("Renumbered"));
    await deliver("Renumbered", "s@v.test", "one", [{ filename: "a.csv", content: "1" }]);
    const ctx = memoryContext();
    await ctx.metadata.set("imap", { uidvalidity: "1", lastUid: 99 });
    const c = new EmailConnector(imapConn({ folder: "Renumbered" }), ctx, fast);
    expect((await c.list()).map((f) => f.name)).toEqual(["a.csv"]);
  });

  it("downloads a large attachment intact and marks nothing before markProcessed", async () => {
    const big = "x".repeat(3 * 1024 * 1024) + "end";
    await mailbox((c) => c.mailboxCreate("Big"));
    await deliver("Big", "s@v.test", "big", [{ filename: "big.csv", content: big }]);
    const c = new EmailConnector(imapConn({ folder: "Big" }), memoryContext(), fast);
    const [file] = await c.list();
    if (!file) throw new Error("nothing listed");
    const local = path.join(work, "big.csv");
    expect((await c.download(file, local)).size).toBe(big.length);
    expect(createHash("sha256").update(readFileSync(local)).digest("hex")).toBe(createHash("sha256").update(big).digest("hex"));
    expect(await c.list()).toHaveLength(1);
  });

  it("wrong password: auth error after one attempt; missing mailbox: not_found; secrets not logged", async () => {
    const ctx = memoryContext();
    const bad = new EmailConnector(imapConn({ password: "wrong-imap-pass-77" }), ctx, fast);
    const started = Date.now();
    const err = await caught(bad.list());
    expect(err.code).toBe("auth");
    expect(err.retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(3_000);
    const missing = new EmailConnector(imapConn({ folder: "NoSuchBox" }), ctx, fast);
    expect((await caught(missing.list())).code).toBe("not_found");
    const ok = new EmailConnector(imapConn(), ctx, fast);
    expect((await ok.test()).facts.mailbox).toBe("INBOX");
    const stale: RemoteFile = { name: "x.csv", path: "x", size: 1, modified: null, ref: "1:1:2" };
    expect((await caught(ok.download(stale, path.join(work, "stale.csv")))).code).toBe("not_found");
    expect(existsSync(path.join(work, "stale.csv"))).toBe(false);
    const text = ctx.logText() + JSON.stringify(err.toJSON());
    expect(text).toMatch(/"protocol":"imap"/);
    const sasl = Buffer.from(`\u0000${USER.username}\u0000${USER.password}`).toString("base64");
    for (const secret of [USER.password, "wrong-imap-pass-77", sasl]) expect(text).not.toContain(secret);
  });

  it("refuses a private IMAP host unless allowed", async () => {
    const c = new EmailConnector(imapConn(), memoryContext({ allowPrivateHosts: false }), fast);
    const err = await caught(c.list());
    expect(err.code).toBe("private_host");
    expect(err.describe()).toContain("CONVEYOR_ALLOW_PRIVATE_HOSTS");
  });
});

describe("email export over SMTP (smtp-server)", () => {
  const received: Array<{ from: string; to: string[]; raw: Buffer }> = [];
  let smtp: SMTPServer;
  let port = 0;
  beforeAll(async () => {
    smtp = new SMTPServer({
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _session, cb) {
        if (auth.username === "mailer" && auth.password === "smtp-secret-pw-55") cb(null, { user: "mailer" });
        else cb(new Error("Invalid username or password"));
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks) });
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    port = (smtp.server.address() as AddressInfo).port;
  });
  afterAll(() => {
    // The pool keeps its connection open, and smtp-server waits for it before closing.
    closeSmtpPools();
    return new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("sends the file attached to every recipient through the pooled transport", async () => {
    const ctx = memoryContext({ smtpUrl: `smtp://mailer:smtp-secret-pw-55@127.0.0.1:${port}?from=feeds@shop.test` });
    const file = path.join(work, "orders.csv");
    writeFileSync(file, "oid,total\n1,9.50\n");
    const c = new EmailConnector({ type: "email", address: ["ops@shop.test", "acct@shop.test"], subject: "Orders today" }, ctx, fast);
    expect(await c.upload(file, "orders-2024.csv")).toEqual({ size: 17 });
    expect((await c.test()).facts.recipients).toBe("ops@shop.test, acct@shop.test");
    const last = received.at(-1);
    expect(last?.from).toBe("feeds@shop.test");
    expect(last?.to).toEqual(["ops@shop.test", "acct@shop.test"]);
    const parsed = await simpleParser(last?.raw ?? Buffer.alloc(0));
    expect(parsed.subject).toBe("Orders today");
    expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([["orders-2024.csv", "oid,total\n1,9.50\n"]]);
    expect(ctx.logText()).toMatch(/"protocol":"smtp"/);
    expect(ctx.logText()).not.toContain("smtp-secret-pw-55");
  });

  it("wrong SMTP password: auth, not retried; no SMTP URL: names CONVEYOR_SMTP_URL", async () => {
    const file = path.join(work, "x.csv");
    writeFileSync(file, "x\n");
    const before = received.length;
    const ctx = memoryContext({ smtpUrl: `smtp://mailer:wrong-smtp-pw-66@127.0.0.1:${port}` });
    const err = await caught(new EmailConnector({ type: "email", address: "ops@shop.test" }, ctx, fast).upload(file, "x.csv"));
    expect(err.code).toBe("auth");
    expect(err.describe()).not.toContain("wrong-smtp-pw-66");
    expect(received.length).toBe(before);
    const none = await caught(new EmailConnector({ type: "email", address: "ops@shop.test" }, memoryContext(), fast).upload(file, "x.csv"));
    expect(none.describe()).toContain("CONVEYOR_SMTP_URL");
    const badAddress = await caught(new EmailConnector({ type: "email", address: "not an address" }, ctx, fast).upload(file, "x.csv"));
    expect(badAddress.code).toBe("definition_invalid");
  });
});
