import path from "node:path";
import type { MessageStructureObject } from "imapflow";
import { ConveyorError } from "../src/errors.js";
import type { ConnectionConfig, RemoteFile } from "./types.js";

/** An e-mail connection: an import's mailbox and search, an export's subject and body. */
export interface EmailConnection extends ConnectionConfig {
  folder?: string;
  email_search?: { from?: string; subject?: string; since_days?: number };
  subject?: string;
  body?: string;
}

/** Internal knobs of the e-mail connector; tests shorten them. */
export interface EmailOptions {
  /** Connection, greeting and idle socket timeout (default 60 s). */
  timeoutMs?: number;
  /** First backoff delay of the connect retry. */
  retryBaseDelayMs?: number;
}

export interface Attachment {
  part: string;
  name: string;
  /** Decoded size estimated from the encoded one: IMAP reports the encoded size. */
  size: number;
}

/**
 * An attachment's name as a file name: names come from strangers' mail, so
 * folders (`../../etc/x`, `C:\x`), control characters and leading dots are
 * cut away; what is left is a plain base name.
 */
export function cleanAttachmentName(raw: string): string {
  const base = path.posix.basename(raw.replace(/\\/g, "/"));
  // eslint-disable-next-line no-control-regex
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, "").replace(/^[.\s]+/, "").trim();
  return cleaned.slice(0, 200) || "attachment";
}

function decodedSize(node: MessageStructureObject): number {
  const size = node.size ?? 0;
  return node.encoding?.toLowerCase() === "base64" ? Math.floor((size * 3) / 4) : size;
}

/** Attachments of a message: parts with a file name, or with disposition attachment. */
export function attachmentsOf(root: MessageStructureObject | undefined): Attachment[] {
  const out: Attachment[] = [];
  const walk = (node: MessageStructureObject): void => {
    if (node.childNodes?.length) {
      for (const child of node.childNodes) walk(child);
      return;
    }
    const filename = node.dispositionParameters?.filename ?? node.parameters?.name;
    if (!filename && node.disposition !== "attachment") return;
    // A single-part message has no part number; IMAP calls its body part 1.
    out.push({ part: node.part ?? "1", name: cleanAttachmentName(filename ?? "attachment"), size: decodedSize(node) });
  };
  if (root) walk(root);
  return out;
}

/** `uidvalidity:uid:part` from a listed file. */
export function parseRef(file: RemoteFile): { uidvalidity: string; uid: number; part: string } {
  const match = /^(\d+):(\d+):([\d.]+)$/.exec(file.ref ?? "");
  if (!match?.[1] || !match[2] || !match[3])
    throw new ConveyorError("not_found", `${file.name} is not an e-mail attachment from a listing of this connection`, { hint: "list the mailbox again" });
  return { uidvalidity: match[1], uid: Number(match[2]), part: match[3] };
}
