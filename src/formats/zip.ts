import type { Readable } from "node:stream";
import yauzl from "yauzl";
import { ConveyorError } from "../errors.js";

export interface ZipEntryInfo {
  /** Cleaned path: forward slashes, no `..`, no leading slash. */
  name: string;
  entry: yauzl.Entry;
}

export interface OpenZip {
  entries: ZipEntryInfo[];
  isXlsx: boolean;
  open(entry: ZipEntryInfo): Promise<Readable>;
  close(): void;
}

/** Entry paths come from outside: keep them readable in messages but never usable as a path. */
export function cleanEntryName(raw: string): string {
  return raw
    .replace(/\\/g, "/")
    .split("/")
    .filter((part) => part !== "" && part !== "." && part !== "..")
    .join("/");
}

export async function openZip(localPath: string): Promise<OpenZip> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    // strictFileNames off: we never write entries to disk, we only read them, and suppliers' zips
    // often carry Windows paths that the strict mode rejects.
    yauzl.open(localPath, { lazyEntries: true, autoClose: false, strictFileNames: false }, (err, file) => {
      if (err) reject(badZip(err));
      else resolve(file);
    });
  });
  const all: ZipEntryInfo[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      all.push({ name: cleanEntryName(entry.fileName), entry });
      zip.readEntry();
    });
    zip.on("end", () => resolve());
    zip.on("error", (err: Error) => reject(badZip(err)));
    zip.readEntry();
  });
  const names = new Set(all.map((e) => e.name));
  const isXlsx = names.has("[Content_Types].xml") && names.has("xl/workbook.xml");
  const entries = all.filter((e) => !e.entry.fileName.endsWith("/") && !e.name.startsWith("__MACOSX/") && e.name !== "");
  return {
    entries,
    isXlsx,
    open: (info) =>
      new Promise<Readable>((resolve, reject) => {
        zip.openReadStream(info.entry, (err, stream) => {
          if (err) reject(badZip(err));
          else resolve(stream);
        });
      }),
    close: () => zip.close(),
  };
}

function badZip(err: Error): ConveyorError {
  return new ConveyorError("file_format", `The zip archive cannot be read: ${err.message}`, {
    cause: err,
    hint: "Check that the file was transferred completely (binary mode) and is a valid zip archive.",
  });
}

/** `name` of a file config: `/…/flags` or a pattern matched against the whole base name. */
export function namePattern(name: string): RegExp {
  const slashed = /^\/(.*)\/([a-z]*)$/s.exec(name);
  try {
    if (slashed) return new RegExp(slashed[1] ?? "", slashed[2]);
    return new RegExp(`^(?:${name})$`);
  } catch (err) {
    throw new ConveyorError("definition_invalid", `name ${JSON.stringify(name)} is not a valid regular expression`, {
      cause: err,
      details: { field: "name" },
    });
  }
}

/** The entries to read: those whose base name matches `name`, else the only entry. */
export function selectEntries(entries: ZipEntryInfo[], name: string | undefined): ZipEntryInfo[] {
  if (name) {
    const pattern = namePattern(name);
    const matching = entries.filter((e) => pattern.test(baseName(e.name)) || pattern.test(e.name));
    if (matching.length) return matching;
  }
  if (entries.length === 1 || !name) {
    if (entries.length) return entries;
  }
  const listed = entries.map((e) => e.name).join(", ") || "none";
  throw new ConveyorError(
    "file_missing",
    entries.length
      ? `No entry of the zip archive matches name ${JSON.stringify(name)}; entries: ${listed}`
      : "The zip archive holds no file",
    { details: { entries: entries.map((e) => e.name) }, hint: "Set `name` to a pattern that matches the entry to read." },
  );
}

function baseName(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? path : path.slice(slash + 1);
}
