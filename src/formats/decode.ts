import { StringDecoder } from "node:string_decoder";
import iconv from "iconv-lite";
import { ConveyorError } from "../errors.js";

export interface Charset {
  encoding: string;
  /** Bytes of byte-order mark at the start of the stream. */
  bomLength: number;
}

/** A byte-order mark decides; else the configured `encoding`; else UTF-8. */
export function detectCharset(head: Buffer, configured: string | undefined): Charset {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: "utf-8", bomLength: 3 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: "utf-16le", bomLength: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: "utf-16be", bomLength: 2 };
  const encoding = normalizeEncoding(configured ?? "utf-8");
  return { encoding, bomLength: 0 };
}

function normalizeEncoding(name: string): string {
  const lower = name.trim().toLowerCase();
  if (lower === "utf8" || lower === "utf-8") return "utf-8";
  if (!iconv.encodingExists(lower)) {
    throw new ConveyorError("definition_invalid", `encoding ${JSON.stringify(name)} is not a known character set`, {
      details: { field: "encoding", value: name },
      hint: "Use utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15, cp850, … ",
    });
  }
  return lower;
}

function isUtf8(encoding: string): boolean {
  return encoding === "utf-8";
}

/**
 * Decodes bytes to text chunks before any parser sees them (parsers split on bytes that legacy
 * charsets reuse). UTF-8 goes through Node's native decoder; the rest through iconv-lite.
 */
export async function* decodeText(chunks: AsyncIterable<Buffer>, charset: Charset): AsyncGenerator<string> {
  let skip = charset.bomLength;
  const native = isUtf8(charset.encoding) ? new StringDecoder("utf8") : null;
  const legacy = native ? null : iconv.getDecoder(charset.encoding, { stripBOM: false });
  for await (let chunk of chunks) {
    if (skip > 0) {
      const dropped = Math.min(skip, chunk.length);
      chunk = chunk.subarray(dropped);
      skip -= dropped;
      if (!chunk.length) continue;
    }
    const text = native ? native.write(chunk) : (legacy?.write(chunk) ?? "");
    if (text) yield text;
  }
  const tail = native ? native.end() : (legacy?.end() ?? "");
  if (tail) yield tail;
}

/** Decodes the peeked head for sniffing (JSON vs XML vs CSV), ignoring a cut last character. */
export function decodeHead(head: Buffer, charset: Charset): string {
  const body = head.subarray(charset.bomLength);
  if (isUtf8(charset.encoding)) return body.toString("utf8");
  return iconv.decode(body, charset.encoding, { stripBOM: false });
}
