import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { EmailConnector } from "../../connectors/email.js";
import { emailSpec } from "../../connectors/email-spec.js";
import { completeConnector } from "../../connectors/index.js";
import { closeSmtpPools } from "../../connectors/smtp-pool.js";
import type { ConnectionConfig } from "../../connectors/types.js";
import { DovecotServer } from "../helpers/dovecot.js";
import { TcpProxy } from "../helpers/tcp-proxy.js";
import type { ConformanceTarget } from "./conformance-kit.js";
import { deliverer, mailboxFiles, mailboxOf } from "./email-files.js";

/** Receives over SMTP and hands each complete message to `deliver`; a cut DATA delivers nothing. */
async function startSmtp(deliver: (recipient: string, raw: Buffer) => Promise<void>): Promise<SMTPServer & { port: number }> {
  const smtp = new SMTPServer({
    disabledCommands: ["STARTTLS", "AUTH"],
    size: 64 * 1024 * 1024,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", () => undefined);
      stream.on("end", () => {
        const raw = Buffer.concat(chunks);
        Promise.all(session.envelope.rcptTo.map((r) => deliver(r.address, raw))).then(() => cb(), (err: unknown) => cb(err as Error));
      });
    },
  });
  smtp.on("error", () => undefined);
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  return Object.assign(smtp, { port: (smtp.server.address() as AddressInfo).port });
}

/**
 * email: an import reads attachments of one mailbox over IMAP (Dovecot), an
 * export sends the file as an attachment over SMTP (smtp-server, which
 * delivers into the mailbox the recipient names). Both sit behind a
 * fault-injecting proxy. A connection names one mailbox (download) or one
 * recipient (upload), so the target makes one per suite folder.
 */
export async function emailTarget(): Promise<ConformanceTarget> {
  const user = { username: "buyer", password: `imap-${randomBytes(6).toString("hex")}` };
  const dovecot = await new DovecotServer([user]).start();
  const imapProxy = await new TcpProxy(dovecot.port).start();
  const smtp = await startSmtp(deliverer(dovecot.port, user));
  const smtpProxy = await new TcpProxy(smtp.port).start();
  const connection: ConnectionConfig = { type: "email", address: "127.0.0.1", port: imapProxy.port, username: user.username, password: user.password };
  return {
    connection,
    fileConnection: (rel, direction) =>
      direction === "download" ? { ...connection, folder: mailboxOf(rel) } : { type: "email", address: `${mailboxOf(rel)}@conformance.test`, subject: rel },
    create: (conn, ctx, options) =>
      completeConnector(
        emailSpec,
        new EmailConnector(conn, { ...ctx, settings: { ...ctx.settings, allowPrivateHosts: true, smtpUrl: `smtp://127.0.0.1:${smtpProxy.port}?from=conveyor@conformance.test` } }, {
          timeoutMs: options?.idleTimeoutMs ?? 10_000,
          ...(options?.retryBaseDelayMs ? { retryBaseDelayMs: options.retryBaseDelayMs } : {}),
        }),
      ),
    files: mailboxFiles(dovecot.port, user),
    // One IMAP connection is one login: a wrong password must cost exactly one.
    loginAttempts: () => imapProxy.connections,
    transferSize: 4 * 1024 * 1024,
    // A message that does not exist: its uid is far past anything delivered.
    missingFile: { name: "missing.csv", path: "999999/2/missing.csv", size: 10, modified: null, ref: "1:999999:2" },
    // IMAP reports the encoded size of a part; the listing marks it approximate.
    listsSize: false,
    faults: {
      // A download is not retried inside the connector; a send is, so every SMTP attempt meets the cut.
      dropMidTransfer: (direction, afterBytes) => (direction === "download" ? imapProxy.cutAfter(afterBytes, "down") : smtpProxy.cutAfter(afterBytes, "up", true)),
      slow: () => imapProxy.stall(),
      clear: () => {
        imapProxy.heal();
        smtpProxy.heal();
      },
    },
    // Both fixed by a line each (connectors/errors.ts DROP_TEXT, email.ts classifySmtpError); the owners decide.
    unsupported: {
      folders: "an e-mail import reads one mailbox (connection.folder); its attachments are the files, there are no subfolders",
      missingFolder: "the mailbox is the connection's folder, not a list() argument; a missing one is not_found in email.test.ts",
      paths: "attachments are named by message uid and part, not by paths that could climb anywhere",
      replace: "an e-mail export sends a new message each time; nothing is overwritten",
      delete: "a processed message is marked seen and passed by the checkpoint (delete answers a protocol error)",
      move: "a processed message is marked seen and passed by the checkpoint (move answers a protocol error)",
      mkdir: "an e-mail connection makes no mailboxes (mkdir answers a protocol error)",
      atomicListing: "a mail system delivers a message whole once its DATA is complete; the connector sends one message",
      refusals: "the test Dovecot serves plain IMAP on loopback: there is no host key, and no certificate to refuse",
    },
    async close() {
      closeSmtpPools();
      await smtpProxy.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await imapProxy.close();
      await dovecot.stop();
    },
  };
}
