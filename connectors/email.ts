import { open, stat } from "node:fs/promises";
import { ConveyorError } from "../src/errors.js";
import { CONNECT_RETRY, withRetry } from "../src/retry.js";
import { ImapMailbox } from "./email-imap.js";
import type { EmailConnection, EmailOptions } from "./email-parts.js";
import { senderOf, smtpTransport, smtpUrlRequired } from "./smtp-pool.js";
import type { ConnectionTestResult, ConnectorContext, ConnectorFactory, ConnectorParts, RemoteFile, TransferResult, UploadAbout } from "./types.js";

/** Maps what nodemailer throws to the connector codes; nodemailer's messages carry no password. */
export function classifySmtpError(err: unknown): ConveyorError {
  if (err instanceof ConveyorError) return err;
  const e = err as { code?: string; responseCode?: number; message?: string };
  const message = e.message ?? String(err);
  const hint = "check CONVEYOR_SMTP_URL";
  switch (e.code) {
    case "EAUTH":
      return new ConveyorError("auth", `the SMTP server refused the credentials: ${message}`, { cause: err, hint: `${hint}; the attempt was not repeated` });
    case "ETLS":
      return new ConveyorError("tls", `TLS with the SMTP server failed: ${message}`, { cause: err, hint: "smtps:// (port 465) is implicit TLS, smtp:// upgrades with STARTTLS" });
    case "ETIMEDOUT":
      return new ConveyorError("timeout", `the SMTP server did not answer in time: ${message}`, { cause: err, retryable: true });
    case "ESOCKET":
      // A socket error after the greeting is a broken transfer, not an unreachable server.
      if (/ECONNRESET|EPIPE|ECONNABORTED/.test(message)) return new ConveyorError("transfer", `the connection to the SMTP server broke while sending: ${message}`, { cause: err, retryable: true });
      return new ConveyorError("connect", `cannot reach the SMTP server: ${message}`, { cause: err, retryable: true, hint });
    case "ECONNECTION":
    case "EDNS":
      return new ConveyorError("connect", `cannot reach the SMTP server: ${message}`, { cause: err, retryable: true, hint });
    case "EENVELOPE":
      return new ConveyorError("protocol", `the SMTP server refused the recipients: ${message}`, { cause: err, hint: "check connection.address" });
    default: {
      const retryable = (e.responseCode ?? 0) >= 400 && (e.responseCode ?? 0) < 500;
      return new ConveyorError("transfer", `sending the e-mail failed: ${message}`, { cause: err, retryable });
    }
  }
}

/**
 * `email`: an import reads attachments over IMAP (`address` is the IMAP
 * host); an export sends the file as an attachment over the worker's SMTP
 * server (`address` is the recipient or list of recipients).
 */
export class EmailConnector implements ConnectorParts {
  readonly type = "email" as const;
  private imapSide: ImapMailbox | undefined;

  constructor(private readonly conn: EmailConnection, private readonly ctx: ConnectorContext, private readonly options: EmailOptions = {}) {}

  private get imap(): ImapMailbox {
    this.imapSide ??= new ImapMailbox(this.conn, this.ctx, this.options);
    return this.imapSide;
  }

  private get recipients(): string[] {
    const a = this.conn.address;
    const list = (Array.isArray(a) ? a : a ? [a] : []).map((r) => r.trim()).filter(Boolean);
    const bad = list.filter((r) => !/^[^\s@]+@[^\s@]+$/.test(r));
    if (list.length === 0 || bad.length)
      throw new ConveyorError("definition_invalid", `connection.address must be one or more e-mail addresses for an e-mail export${bad.length ? `; not an address: ${bad.join(", ")}` : ""}`);
    return list;
  }

  list(): Promise<RemoteFile[]> {
    return this.imap.list();
  }

  download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    return this.imap.download(file, localPath);
  }

  markProcessed(file: RemoteFile): Promise<void> {
    return this.imap.markProcessed(file);
  }

  async upload(localPath: string, remoteName: string, about?: UploadAbout): Promise<TransferResult> {
    const to = this.recipients;
    const url = smtpUrlRequired(this.ctx.settings.smtpUrl);
    const size = (await stat(localPath)).size;
    const transport = smtpTransport(url, this.ctx.logger, this.ctx.verbose);
    await withRetry(
      async () => {
        try {
          await transport.sendMail({
            from: senderOf(url),
            to,
            // automations.md: subject and body default to the automation's name and the run's summary.
            subject: this.conn.subject ?? about?.title ?? remoteName,
            // Streamed from the file by nodemailer, never read whole.
            ...(about?.asBody
              ? { [(await startsWithTag(localPath)) ? "html" : "text"]: { path: localPath } }
              : { text: this.conn.body ?? about?.summary ?? remoteName, attachments: [{ filename: remoteName, path: localPath }] }),
          });
        } catch (err) {
          throw classifySmtpError(err);
        }
      },
      { ...CONNECT_RETRY, ...(this.options.retryBaseDelayMs ? { baseDelayMs: this.options.retryBaseDelayMs } : {}), signal: this.ctx.signal },
    );
    return { size };
  }

  /** An address with `@` is an export (checks the SMTP server); a host name is an import (checks the mailbox). */
  async test(): Promise<ConnectionTestResult> {
    const a = this.conn.address;
    const first = Array.isArray(a) ? a[0] : a;
    if (first?.includes("@")) {
      const url = smtpUrlRequired(this.ctx.settings.smtpUrl);
      await smtpTransport(url, this.ctx.logger, this.ctx.verbose)
        .verify()
        .catch((err: unknown) => {
          throw classifySmtpError(err);
        });
      return { ok: true, facts: { smtp: new URL(url).host, recipients: this.recipients.join(", ") } };
    }
    return { ok: true, facts: await this.imap.test() };
  }

  async close(): Promise<void> {
    // IMAP clients are closed after each operation; the SMTP pool is shared by the process.
  }
}

export function createEmailConnector(connection: EmailConnection, context: ConnectorContext, options?: EmailOptions): ConnectorParts {
  return new EmailConnector(connection, context, options);
}

export const emailConnectorFactory: ConnectorFactory = (connection, context) => new EmailConnector(connection, context);

/** A rendered body that opens with a tag is HTML to a mail reader; anything else is plain text. */
async function startsWithTag(localPath: string): Promise<boolean> {
  const file = await open(localPath, "r");
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(64), 0, 64, 0);
    return buffer.subarray(0, bytesRead).toString("utf8").trimStart().startsWith("<");
  } finally {
    await file.close();
  }
}
