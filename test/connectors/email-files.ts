import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ImapFlow } from "imapflow";
import { simpleParser, type Attachment } from "mailparser";
import nodemailer from "nodemailer";
import type { DovecotUser } from "../helpers/dovecot.js";
import type { ServerFiles } from "./conformance-kit.js";

/** A suite path's folder as a mailbox: `big/big.bin` lives in mailbox `big`, a bare name in INBOX. */
export function mailboxOf(rel: string): string {
  const slash = rel.lastIndexOf("/");
  return slash < 0 ? "INBOX" : rel.slice(0, slash);
}

function baseOf(rel: string): string {
  return rel.slice(rel.lastIndexOf("/") + 1);
}

/** A whole MIME message carrying one attachment, built by nodemailer. */
export async function mimeWith(filename: string, content: Buffer, subject = filename): Promise<Buffer> {
  const info = await nodemailer
    .createTransport({ streamTransport: true, buffer: true })
    .sendMail({ from: "supplier@conformance.test", to: "buyer@conformance.test", subject, text: "see attached", attachments: [{ filename, content }] });
  return info.message as Buffer;
}

/**
 * The mailbox as the suite's server view, over a direct IMAP session to
 * Dovecot (never through the fault proxy): a file is an attachment of a
 * message in the mailbox named after the path's folder. Messages are parsed
 * whole, which is fine at the few MB the e-mail target uses.
 */
export function mailboxFiles(port: number, user: DovecotUser): ServerFiles {
  const session = async <T>(fn: (c: ImapFlow) => Promise<T>): Promise<T> => {
    const c = new ImapFlow({ host: "127.0.0.1", port, secure: false, auth: { user: user.username, pass: user.password }, logger: false });
    c.on("error", () => undefined);
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.logout().catch(() => c.close());
    }
  };
  const append = async (rel: string, content: Buffer): Promise<void> => {
    const raw = await mimeWith(baseOf(rel), content);
    await appendTo(mailboxOf(rel), raw);
  };
  const appendTo = (box: string, raw: Buffer): Promise<void> =>
    session(async (c) => {
      if (box !== "INBOX") await c.mailboxCreate(box).catch(() => undefined);
      await c.append(box, raw);
    });
  /** Attachments of the mailbox, oldest message first. */
  const attachments = (box: string): Promise<Attachment[]> =>
    session(async (c) => {
      const opened = await c.mailboxOpen(box).then(() => true, () => false);
      if (!opened || !c.mailbox || c.mailbox.exists === 0) return [];
      const found: Attachment[] = [];
      for (const msg of await c.fetchAll("1:*", { source: true })) {
        if (msg.source) found.push(...(await simpleParser(msg.source)).attachments);
      }
      return found;
    });
  const latest = async (rel: string): Promise<Attachment | undefined> =>
    (await attachments(mailboxOf(rel))).filter((a) => baseOf(a.filename ?? "") === baseOf(rel)).pop();
  return {
    async put(rel, localFile) {
      await append(rel, await readFile(localFile));
    },
    async write(rel, content) {
      await append(rel, typeof content === "string" ? Buffer.from(content) : content);
    },
    async hash(rel) {
      const a = await latest(rel);
      return a ? createHash("sha256").update(a.content).digest("hex") : null;
    },
    async names(rel) {
      return (await attachments(rel === "" ? "INBOX" : rel)).map((a) => baseOf(a.filename ?? ""));
    },
    async size(rel) {
      return (await latest(rel))?.content.length ?? null;
    },
  };
}

/** Delivers a received message into the mailbox its recipient names (`<mailbox>@…`), as a mail system would. */
export function deliverer(port: number, user: DovecotUser): (recipient: string, raw: Buffer) => Promise<void> {
  return async (recipient, raw) => {
    const box = recipient.slice(0, recipient.indexOf("@"));
    const c = new ImapFlow({ host: "127.0.0.1", port, secure: false, auth: { user: user.username, pass: user.password }, logger: false });
    c.on("error", () => undefined);
    await c.connect();
    try {
      if (box !== "INBOX") await c.mailboxCreate(box).catch(() => undefined);
      await c.append(box, raw);
    } finally {
      await c.logout().catch(() => c.close());
    }
  };
}
