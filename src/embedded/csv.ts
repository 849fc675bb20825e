import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import type { Readable } from "node:stream";
import Papa from "papaparse";
import type Yauzl from "yauzl";
import { lazyRequire } from "../lazy-require.js";

export { csvLine } from "./csv-lines.js";

/** Only a zipped upload loads it. */
const yauzl = lazyRequire<typeof Yauzl>("yauzl");

export type UploadEncoding = "csv" | "gzip" | "zip";

/** Gzip and zip are recognised by their first bytes, not by the file name a client chose. */
export async function detectEncoding(file: string): Promise<UploadEncoding> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return "zip";
    return "csv";
  } finally {
    await handle.close();
  }
}

function firstZipEntry(file: string): Promise<Readable> {
  return new Promise((resolve, reject) => {
    yauzl().open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err) return reject(new Error(`the zip file cannot be read: ${err.message}`));
      zip.on("entry", (entry: Yauzl.Entry) => {
        if (entry.fileName.endsWith("/")) return zip.readEntry();
        zip.openReadStream(entry, (openErr, stream) => (openErr ? reject(openErr) : resolve(stream)));
      });
      zip.on("end", () => reject(new Error("the zip file holds no file: put the CSV in it")));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

/** The CSV text of an upload, decompressed as it streams. */
export async function openCsv(file: string, encoding: UploadEncoding): Promise<Readable> {
  if (encoding === "zip") return firstZipEntry(file);
  const raw = createReadStream(file);
  if (encoding === "csv") return raw;
  const gunzip = createGunzip();
  raw.on("error", (err) => gunzip.destroy(err));
  return raw.pipe(gunzip);
}

/**
 * Rows of a CSV as arrays of strings, streamed: papaparse without header
 * mapping (faster) and without dynamic typing (it mangles codes like 0700),
 * the byte-order mark stripped, empty lines skipped. Rows come in parsed
 * chunks and the source is paused while enough rows wait (row-by-row object
 * streams were four times slower). Decoding is the stream's, so a character
 * split between two chunks stays whole.
 */
const HIGH_WATER_ROWS = 2000;

export async function* csvRows(source: Readable): AsyncGenerator<string[]> {
  let queue: string[][] = [];
  let done = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const signal = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  source.setEncoding("utf8");
  Papa.parse<string[]>(source, {
    header: false,
    skipEmptyLines: true,
    chunk(results) {
      for (const row of results.data) queue.push(row);
      if (queue.length >= HIGH_WATER_ROWS) source.pause();
      signal();
    },
    complete() {
      done = true;
      signal();
    },
    error(err: Error) {
      failure = err;
      signal();
    },
  });
  source.on("error", (err) => {
    failure = err;
    signal();
  });
  let first = true;
  for (;;) {
    if (queue.length > 0) {
      const batch = queue;
      queue = [];
      for (const row of batch) {
        if (first && row[0] !== undefined) row[0] = row[0].replace(/^\uFEFF/, "");
        first = false;
        yield row;
      }
      if (!done && source.isPaused()) source.resume();
      continue;
    }
    if (failure) throw failure;
    if (done) return;
    await new Promise<void>((resolve) => (wake = resolve));
  }
}
