import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ConveyorError } from "../errors.js";

/** A byte stream whose first bytes were already read, so the format can be sniffed without losing them. */
export interface PeekedBytes {
  head: Buffer;
  chunks: AsyncIterable<Buffer>;
  /** The head is the whole stream. */
  whole: boolean;
}

const PEEK_BYTES = 64 * 1024;

/** Reads at least `size` bytes (or the whole stream when shorter) and hands back the rest untouched. */
export async function peek(source: AsyncIterable<Buffer>, size = PEEK_BYTES): Promise<PeekedBytes> {
  const iterator = source[Symbol.asyncIterator]();
  const parts: Buffer[] = [];
  let length = 0;
  let done = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    parts.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(parts, length);
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length) yield head;
    if (done) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  return { head, chunks: rest(), whole: done };
}

export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

export function isZip(head: Buffer): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}

/** Gunzips by magic bytes whatever the name says; nested gzip (a .gz of a .gz) is unpacked too. */
export async function unpackGzip(bytes: PeekedBytes, stream: (chunks: AsyncIterable<Buffer>) => Readable): Promise<PeekedBytes> {
  let current = bytes;
  for (let depth = 0; depth < 3 && isGzip(current.head); depth++) {
    const gunzip = stream(current.chunks).pipe(createGunzip());
    current = await peek(gunzipped(gunzip));
  }
  return current;
}

/** zlib's own words ("unexpected end of file") do not say which file or what to do about it. */
async function* gunzipped(source: Readable): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of source) yield chunk as Buffer;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code !== "Z_BUF_ERROR" && code !== "Z_DATA_ERROR") throw err;
    const what = code === "Z_BUF_ERROR" ? "ends before the compressed data does: the file is cut short" : "is damaged";
    throw new ConveyorError("file_format", `the gzip file ${what} (${(err as Error).message})`, {
      cause: err,
      hint: "The file was probably cut during its upload. Ask the supplier to upload it again: it is left in place, and the next run reads the new one.",
    });
  }
}
