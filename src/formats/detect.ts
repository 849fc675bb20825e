import type { ReadFormat, ReadOptions } from "./types.js";

export interface Detected {
  format: ReadFormat;
  /** JSON Lines: one record per line instead of an array. */
  jsonLines: boolean;
  /** A `.tsv` file with no configured delimiter is tab-separated. */
  tab: boolean;
}

function extension(name: string): string {
  const base = name.toLowerCase().replace(/\.(gz|gzip)$/, "");
  const dot = base.lastIndexOf(".");
  return dot < 0 ? "" : base.slice(dot + 1);
}

function looksLikeJsonLines(head: string): boolean {
  const lines = head.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length < 2 || !lines[1]?.startsWith("{")) return false;
  try {
    const first: unknown = JSON.parse(lines[0] ?? "");
    return first !== null && typeof first === "object" && !Array.isArray(first);
  } catch {
    return false;
  }
}

/**
 * The format of a file to read, in the order of automations.md: the configured `format`, the
 * `bulk_file`/`jsonpath`/`xpath` flags, the first characters of the decoded text, the extension
 * of the name (a trailing `.gz` ignored), else CSV.
 */
export function detectFormat(options: ReadOptions, headText: string, name: string): Detected {
  const ext = extension(name);
  const first = headText.trimStart()[0] ?? "";
  const jsonLines = ext === "jsonl" || ext === "ndjson" || (first === "{" && looksLikeJsonLines(headText));
  const tab = ext === "tsv" || ext === "tab";
  const result = (format: ReadFormat): Detected => ({ format, jsonLines: format === "json" && jsonLines, tab: tab && format === "csv" });
  if (options.format) return result(options.format);
  if (options.bulk_file) return result("bulk");
  if (options.jsonpath) return result("json");
  if (options.xpath) return result("xml");
  if (first === "[" || first === "{") return result("json");
  if (first === "<") return result("xml");
  if (ext === "json" || ext === "jsonl" || ext === "ndjson") return result("json");
  if (ext === "xml") return result("xml");
  if (ext === "xlsx" || ext === "xlsm") return result("xlsx");
  return result("csv");
}

const HTML_START = /^(?:<\?xml[^>]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html[\s>])/i;

/**
 * A web page where a feed was expected: a login, error or maintenance page
 * served with status 200, or the wrong file uploaded. Read as XML or CSV it
 * failed with a parser's complaint or "columns: <!DOCTYPE html>"; it gets a
 * message that says what it is. A definition that reads XHTML on purpose
 * (`root` starting at `html`) is left alone.
 */
export function htmlPageProblem(options: ReadOptions, headText: string): string | null {
  const text = headText.trimStart();
  if (!HTML_START.test(text)) return null;
  if ((options.root ?? "").replace(/^\/+/, "").toLowerCase().startsWith("html")) return null;
  const title = /<title[^>]*>([^<]{1,120})/i.exec(text)?.[1]?.replace(/\s+/g, " ").trim();
  return `is a web page, not a feed${title ? ` (its title: "${title}")` : ""}: the server answered with an HTML page, such as a login, error or maintenance page`;
}

/**
 * A file with no text at all. Fixed width, and CSV with configured `headers`,
 * say "no records" that way; every other format needs a header line, a JSON
 * value or a root element even when it holds no record, so an empty one is a
 * failed export or transfer, not an empty feed.
 */
export function blankFileProblem(options: ReadOptions): string | null {
  if (options.format === "fixed" || (options.headers?.length ?? 0) > 0) return null;
  return "is empty (no text at all, not even a header line)";
}
