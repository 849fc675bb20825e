import { JSONPath } from "jsonpath-plus";
import { ConveyorError } from "../src/errors.js";
import type { HttpConnection } from "./http-connection.js";
import { safeUrl } from "./http-client.js";

/** A page-following loop that never ends is a server bug; stop and say so. */
export const MAX_PAGES = 10_000;

type Pagination = NonNullable<HttpConnection["pagination"]>;

/** The `rel="next"` target of a Link header, resolved against the page's URL. */
export function nextFromLink(link: string | string[] | undefined, base: string): string | undefined {
  const text = Array.isArray(link) ? link.join(",") : link;
  if (!text) return undefined;
  for (const part of text.split(/,(?=\s*<)/)) {
    const match = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (!match) continue;
    const rel = /rel\s*=\s*"?([^";]+)"?/i.exec(match[2] ?? "");
    if (rel?.[1]?.split(/\s+/).includes("next")) return new URL(match[1] ?? "", base).toString();
  }
  return undefined;
}

function query(path: string, json: unknown, field: string): unknown[] {
  try {
    return JSONPath({ path, json: json as object, wrap: true, eval: false }) as unknown[];
  } catch (err) {
    throw new ConveyorError("definition_invalid", `${field} ${path} is not a valid JSONPath: ${(err as Error).message}`, { cause: err });
  }
}

/** The records of one page: the `records` path, the page itself when it is an array, or its only array. */
export function pageRecords(page: unknown, pagination: Pagination | undefined): unknown[] {
  if (pagination?.records) {
    const found = query(pagination.records, page, "connection.pagination.records");
    if (found.length === 1 && Array.isArray(found[0])) return found[0];
    return found;
  }
  if (Array.isArray(page)) return page;
  if (page && typeof page === "object") {
    const arrays = Object.values(page).filter(Array.isArray);
    if (arrays.length === 1 && arrays[0]) return arrays[0];
  }
  throw new ConveyorError("file_format", "a page of the http feed holds no single array of records", {
    hint: "set connection.pagination.records to the JSONPath of the records, e.g. $.data.items",
  });
}

/**
 * The URL of the next page from the `pagination` object: `next` may find a URL
 * (absolute or relative), or a token / page number that goes into `param`.
 */
export function nextFromBody(page: unknown, pagination: Pagination, current: string, first: string): string | undefined {
  const found = query(pagination.next, page, "connection.pagination.next")[0];
  if (found === undefined || found === null || found === "" || found === false) return undefined;
  if (typeof found !== "string" && typeof found !== "number")
    throw new ConveyorError("file_format", `connection.pagination.next ${pagination.next} found a ${typeof found}, not a URL, token or page number`);
  const value = String(found);
  if (!pagination.param) {
    if (/^https?:\/\//i.test(value) || value.startsWith("/") || value.startsWith("?")) return new URL(value, current).toString();
    throw new ConveyorError("definition_invalid", `connection.pagination.next found "${value}", which is not a URL`, {
      hint: "set connection.pagination.param to the query parameter that takes this token or page number",
    });
  }
  const url = new URL(first);
  url.searchParams.set(pagination.param, value);
  return url.toString();
}

/** Guards against servers that hand out the same next page forever. */
export class PageTrail {
  private readonly seen = new Set<string>();

  visit(url: string): void {
    if (this.seen.has(url)) throw new ConveyorError("protocol", `the server sent the page ${safeUrl(url)} twice as the next page`, { hint: "check connection.pagination.next" });
    if (this.seen.size >= MAX_PAGES) throw new ConveyorError("protocol", `more than ${MAX_PAGES} pages; stopped`);
    this.seen.add(url);
  }
}
