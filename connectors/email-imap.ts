import { createWriteStream } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { ImapFlow, type MessageStructureObject } from "imapflow";
import { ConveyorError } from "../src/errors.js";
import { registerSecret } from "../src/secrets.js";
import { CONNECT_RETRY, withRetry } from "../src/retry.js";
import { classifyError, type ErrorSite } from "./errors.js";
import { allowsPrivateHosts, checkedHost } from "./net-guard.js";
import type { ConnectorContext, RemoteFile, TransferResult } from "./types.js";
import { attachmentsOf, parseRef, type EmailConnection, type EmailOptions } from "./email-parts.js";
import { imapLogger, registerSaslForms } from "./email-trace.js";

/** Metadata key of the checkpoint: the mailbox's UIDVALIDITY and the last UID processed. */
export const IMAP_METADATA_KEY = "imap";

interface Checkpoint {
  uidvalidity: string;
  lastUid: number;
}

function readCheckpoint(value: unknown): Checkpoint | undefined {
  const v = value as Partial<Checkpoint> | null | undefined;
  return v && typeof v.uidvalidity === "string" && typeof v.lastUid === "number" ? { uidvalidity: v.uidvalidity, lastUid: v.lastUid } : undefined;
}

/**
 * The import side of an e-mail connection: attachments of the messages in one
 * mailbox. Messages are chosen by UID above the checkpoint, not by \Seen, so a
 * message a person already opened is still read, and read once. A new client
 * is made for every operation (imapflow cannot reconnect a closed one).
 */
export class ImapMailbox {
  private readonly host: string;
  private readonly port: number;
  private readonly site: ErrorSite;

  constructor(private readonly conn: EmailConnection, private readonly ctx: ConnectorContext, private readonly options: EmailOptions = {}) {
    const address = Array.isArray(conn.address) ? conn.address[0] : conn.address;
    if (!address) throw new ConveyorError("definition_invalid", "connection.address (the IMAP host) is required for an e-mail import");
    this.host = address;
    this.port = conn.port ?? 993;
    this.site = { protocol: "imap", server: `${this.host}:${this.port}`, action: "connect", phase: "connect" };
    registerSecret(conn.password);
    registerSaslForms(conn.username, conn.password);
  }

  get mailbox(): string {
    return this.conn.folder ?? "INBOX";
  }

  /** Implicit TLS on 993 (the default); on any other port STARTTLS when offered, plain otherwise (test servers). */
  private async open(): Promise<ImapFlow> {
    const target = await checkedHost(this.host, allowsPrivateHosts(this.conn.type, this.ctx.settings), "IMAP host");
    const timeout = this.options.timeoutMs ?? 60_000;
    return withRetry(
      async () => {
        const client = new ImapFlow({
          host: target.address,
          ...(target.servername ? { servername: target.servername } : {}),
          port: this.port,
          secure: this.port === 993,
          auth: { user: this.conn.username ?? "", pass: this.conn.password ?? "" },
          tls: { rejectUnauthorized: this.conn.validate !== false },
          logger: imapLogger(this.ctx),
          connectionTimeout: timeout,
          greetingTimeout: timeout,
          socketTimeout: timeout,
        });
        // Without a listener a late socket error would crash the process.
        client.on("error", (err: unknown) => this.ctx.logger.warn({ err: String(err) }, "imap connection error"));
        try {
          await client.connect();
          return client;
        } catch (err) {
          client.close();
          const e = err as { authenticationFailed?: boolean; serverResponseCode?: string };
          if (e.authenticationFailed || e.serverResponseCode === "AUTHENTICATIONFAILED")
            throw new ConveyorError("auth", `imap login to ${this.site.server} failed: the server refused the credentials`, {
              hint: "check connection.username and connection.password; the attempt was not repeated",
            });
          throw classifyError(err, this.site);
        }
      },
      { ...CONNECT_RETRY, ...(this.options.retryBaseDelayMs ? { baseDelayMs: this.options.retryBaseDelayMs } : {}), signal: this.ctx.signal },
    );
  }

  /** Opens, locks the mailbox, runs `fn`, and always logs out. */
  private async session<T>(action: string, fn: (client: ImapFlow, uidvalidity: string, exists: number) => Promise<T>): Promise<T> {
    const client = await this.open();
    try {
      const lock = await client.getMailboxLock(this.mailbox).catch((err: unknown) => {
        throw new ConveyorError("not_found", `mailbox ${this.mailbox} cannot be opened on ${this.site.server}: ${(err as Error).message}`, { cause: err, hint: "check connection.folder" });
      });
      try {
        const box = client.mailbox;
        if (!box) throw new ConveyorError("protocol", `mailbox ${this.mailbox} is not open`);
        return await fn(client, String(box.uidValidity), box.exists);
      } finally {
        lock.release();
      }
    } catch (err) {
      throw classifyError(err, { ...this.site, action, phase: "operation" });
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  async list(): Promise<RemoteFile[]> {
    return this.session("list", async (client, uidvalidity) => {
      const saved = readCheckpoint(this.ctx.metadata.get(IMAP_METADATA_KEY));
      // A new UIDVALIDITY means the server renumbered the mailbox: old UIDs mean nothing.
      const lastUid = saved && saved.uidvalidity === uidvalidity ? saved.lastUid : 0;
      const search = this.conn.email_search ?? {};
      const now = (this.ctx.now ?? Date.now)();
      const found = await client.search(
        {
          uid: `${lastUid + 1}:*`,
          ...(search.from ? { from: search.from } : {}),
          ...(search.subject ? { subject: search.subject } : {}),
          ...(search.since_days ? { since: new Date(now - search.since_days * 86_400_000) } : {}),
        },
        { uid: true },
      );
      // `n:*` always includes the newest message, even below n.
      const uids = (found || []).filter((uid) => uid > lastUid);
      if (uids.length === 0) return [];
      // Collected whole first: a command issued inside a fetch loop deadlocks imapflow.
      const messages = await client.fetchAll(uids.join(","), { uid: true, bodyStructure: true, internalDate: true }, { uid: true });
      const files: RemoteFile[] = [];
      for (const msg of messages.sort((a, b) => a.uid - b.uid)) {
        const date = msg.internalDate instanceof Date ? msg.internalDate : msg.internalDate ? new Date(msg.internalDate) : null;
        for (const att of attachmentsOf(msg.bodyStructure as MessageStructureObject | undefined))
          files.push({ name: att.name, path: `${msg.uid}/${att.part}/${att.name}`, size: att.size, approximateSize: true, modified: date, ref: `${uidvalidity}:${msg.uid}:${att.part}` });
      }
      return files;
    });
  }

  async download(file: RemoteFile, localPath: string): Promise<TransferResult> {
    const ref = parseRef(file);
    const part = `${localPath}.part`;
    try {
      await this.session(`download ${file.name}`, async (client, uidvalidity) => {
        if (uidvalidity !== ref.uidvalidity)
          throw new ConveyorError("not_found", `mailbox ${this.mailbox} was renumbered (UIDVALIDITY changed); list it again`);
        const res = await client.download(String(ref.uid), ref.part, { uid: true });
        if (!res.content) throw new ConveyorError("not_found", `attachment ${file.name} of message ${ref.uid} no longer exists in ${this.mailbox}`);
        await pipeline(res.content, createWriteStream(part));
      });
      await rename(part, localPath);
      return { size: (await stat(localPath)).size };
    } catch (err) {
      await rm(part, { force: true });
      throw err;
    }
  }

  /** Marks the message \Seen and moves the checkpoint past it. */
  async markProcessed(file: RemoteFile): Promise<void> {
    const ref = parseRef(file);
    await this.session(`mark ${file.name} seen`, async (client, uidvalidity) => {
      if (uidvalidity === ref.uidvalidity) await client.messageFlagsAdd(String(ref.uid), ["\\Seen"], { uid: true });
    });
    const saved = readCheckpoint(this.ctx.metadata.get(IMAP_METADATA_KEY));
    const lastUid = saved && saved.uidvalidity === ref.uidvalidity ? Math.max(saved.lastUid, ref.uid) : ref.uid;
    await this.ctx.metadata.set(IMAP_METADATA_KEY, { uidvalidity: ref.uidvalidity, lastUid });
  }

  async test(): Promise<Record<string, string>> {
    return this.session("test", async (_client, uidvalidity, exists) => ({
      server: this.site.server,
      mailbox: this.mailbox,
      messages: String(exists),
      uidvalidity,
      tls: this.port === 993 ? "implicit" : "STARTTLS when offered",
    }));
  }
}
