import { StringDecoder } from "node:string_decoder";
import type Iconv from "iconv-lite";
import { ConveyorError } from "../errors.js";
import { lazyRequire } from "../lazy-require.js";
import { replacedBytes, type DecodeStats } from "./undecodable.js";

/** Only a feed in a legacy charset loads it: UTF-8 goes through Node's own decoder. */
const iconv = lazyRequire<typeof Iconv>("iconv-lite");

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
  if (!iconv().encodingExists(lower)) {
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
 * Bytes decoded at a time. Each piece becomes one string that the parsed
 * fields are cut from, so it lives as long as any record of it does. A
 * 256 KB piece made a string in V8's large-object space, which is old
 * generation, so a large run spent much of its time in full collections.
 * 32 KB of bytes decode to at most 64 KB of string, which is born young and
 * dies young; reading alone is as fast and peaks lower.
 */
const PIECE = 32 * 1024;

/**
 * Decodes bytes to text chunks before any parser sees them (parsers split on bytes that legacy
 * charsets reuse). UTF-8 goes through Node's native decoder; the rest through iconv-lite.
 */
export async function* decodeText(chunks: AsyncIterable<Buffer>, charset: Charset, stats?: DecodeStats): AsyncGenerator<string> {
  let skip = charset.bomLength;
  const native = isUtf8(charset.encoding) ? new StringDecoder("utf8") : null;
  const legacy = native ? null : iconv().getDecoder(charset.encoding, { stripBOM: false });
  for await (let chunk of chunks) {
    if (skip > 0) {
      const dropped = Math.min(skip, chunk.length);
      chunk = chunk.subarray(dropped);
      skip -= dropped;
      if (!chunk.length) continue;
    }
    for (let at = 0; at < chunk.length; at += PIECE) {
      const piece = chunk.subarray(at, at + PIECE);
      const text = native ? native.write(piece) : (legacy?.write(piece) ?? "");
      if (stats && replacedBytes(text, piece, native !== null)) stats.undecodable++;
      if (text) yield text;
    }
  }
  const tail = native ? native.end() : (legacy?.end() ?? "");
  // A multi-byte character cut off by the end of the file.
  if (stats && tail.includes("\uFFFD")) stats.undecodable++;
  if (tail) yield tail;
}

/** Decodes the peeked head for sniffing (JSON vs XML vs CSV), ignoring a cut last character. */
export function decodeHead(head: Buffer, charset: Charset): string {
  const body = head.subarray(charset.bomLength);
  if (isUtf8(charset.encoding)) return body.toString("utf8");
  return iconv().decode(body, charset.encoding, { stripBOM: false });
}
