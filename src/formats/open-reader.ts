import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { Readable } from "node:stream";
import { ConveyorError } from "../errors.js";
import { isZip, peek, unpackGzip } from "./bytes.js";
import { openCsvReader } from "./csv-reader.js";
import { decodeHead, decodeText, detectCharset } from "./decode.js";
import { blankFileProblem, detectFormat, htmlPageProblem, type Detected } from "./detect.js";
import { openFixedReader } from "./fixed-reader.js";
import { chainReaders } from "./multi-reader.js";
import { openXlsxReader } from "./xlsx-reader.js";
import { markUndecodable, type DecodeStats } from "./undecodable.js";
import type { ReadOptions, RecordReader } from "./types.js";

/** Bytes read at a time: the stream reads one chunk ahead of the parser (decodeText cuts it smaller). */
const CHUNK = 256 * 1024;

async function firstBytes(localPath: string): Promise<Buffer> {
  const handle = await open(localPath, "r").catch((err: unknown) => {
    throw new ConveyorError("file_missing", `The file ${basename(localPath)} cannot be opened: ${String(err)}`, { cause: err });
  });
  try {
    const buffer = Buffer.alloc(4);
    const { bytesRead } = await handle.read(buffer, 0, 4, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * Opens a downloaded file as a stream of records: gzip and zip unpacked by their first bytes,
 * the charset decoded (BOM, else `encoding`, else UTF-8), the format taken from the options or
 * inferred (see detectFormat). The header (or first records) is read before this resolves.
 */
export async function openReader(localPath: string, options: ReadOptions): Promise<RecordReader> {
  const head = await firstBytes(localPath);
  if (!isZip(head)) return openStream(createReadStream(localPath, { highWaterMark: CHUNK }), basename(localPath), options, async () => {});
  // The zip, JSON and XML readers load with the first file that needs them: most feeds are CSV.
  const { openZip, selectEntries } = await import("./zip.js");
  const zip = await openZip(localPath);
  if (zip.isXlsx) {
    zip.close();
    return openXlsxReader(createReadStream(localPath, { highWaterMark: CHUNK }), options);
  }
  try {
    const entries = selectEntries(zip.entries, options.name);
    const openers = entries.map((entry) => async () => openStream(await zip.open(entry), entry.name, options, async () => {}));
    return await chainReaders(entries.map((e) => e.name), openers, () => zip.close());
  } catch (err) {
    zip.close();
    throw err;
  }
}

async function openStream(stream: Readable, name: string, options: ReadOptions, onClose: () => Promise<void>): Promise<RecordReader> {
  try {
    const bytes = await unpackGzip(await peek(stream), (chunks) => Readable.from(chunks, { objectMode: false }));
    if (isZip(bytes.head)) {
      if (options.format && options.format !== "xlsx") {
        throw new ConveyorError("file_format", `${name} holds a zip archive inside a gzip file, which cannot be read as a stream`, {
          hint: "Send the zip archive itself, or a gzip of the data file.",
        });
      }
      return await openXlsxReader(Readable.from(bytes.chunks, { objectMode: false }), options, onClose);
    }
    const charset = detectCharset(bytes.head, options.encoding);
    const headText = decodeHead(bytes.head, charset);
    const blank = bytes.whole && headText.trim() === "" ? blankFileProblem(options) : null;
    if (blank) {
      throw new ConveyorError("file_format", `${name} ${blank}`, {
        hint: "The supplier's export wrote nothing, or the transfer failed: check the file at its source. An empty feed that is meant as one has a header line (CSV), [] (JSON) or an empty root element (XML).",
      });
    }
    const html = htmlPageProblem(options, headText);
    if (html) {
      throw new ConveyorError("file_format", `${name} ${html}`, {
        hint: "Over http, open connection.address in a browser with the same credentials: check the address, the credentials and that the supplier's export still exists. Over ftp, sftp or e-mail, the supplier sent a web page: ask for the feed.",
      });
    }
    const detected = detectFormat(options, headText, name);
    const stats: DecodeStats = { undecodable: 0 };
    const text = decodeText(bytes.chunks, charset, stats);
    return markUndecodable(await textReader(detected, text, name, options, preview(headText), onClose), stats, charset.encoding);
  } catch (err) {
    stream.destroy();
    await onClose();
    throw err;
  }
}

/** The first characters of a file, on one line, for a message that must show what the file holds instead. */
function preview(headText: string): string {
  const flat = headText.trimStart().slice(0, 160).replace(/\s+/g, " ");
  return headText.trimStart().length > 160 ? `${flat}…` : flat;
}

function textReader(detected: Detected, text: AsyncIterable<string>, name: string, options: ReadOptions, head: string, onClose: () => Promise<void>): Promise<RecordReader> {
  switch (detected.format) {
    case "fixed":
      return Promise.resolve(openFixedReader(text, options.skip_lines ?? 0, onClose));
    case "json":
      return import("./json-reader.js").then(({ openJsonReader }) => openJsonReader(text, { root: options.root, jsonpath: options.jsonpath, lines: detected.jsonLines, preview: head }, onClose));
    case "xml":
      return import("./xml-reader.js").then(({ openXmlReader }) => openXmlReader(text, { root: options.root, xpath: options.xpath, preview: head }, onClose));
    case "xlsx":
      throw new ConveyorError("file_format", `${name} is not an xlsx workbook (its first bytes are not a zip archive)`, {
        hint: "Check the file, or set format to csv if it is a CSV file with an .xlsx name.",
      });
    default:
      return openCsvReader(
        text,
        {
          delimiter: options.delimiter ?? (detected.tab ? "\t" : ","),
          enclosure: options.enclosure,
          headers: options.headers,
          skip_lines: options.skip_lines,
          bulk: detected.format === "bulk" || options.bulk_file === true,
          cellsOnDemand: options.cellsOnDemand,
        },
        onClose,
      );
  }
}
