import type { ServiceCaller } from "./http.js";
import { isMissingRecord, isRecord, v1Failure } from "./response.js";

/** A product: a flat record of text fields, identified by `guid` (also `sku`, numeric `id`). */
export type Item = Record<string, string>;

export interface ItemPage {
  items: Item[];
  /** `all`: matching items over every page. */
  total: number;
  page: number;
}

/** The single-item write actions of v1 (part 4.2). */
export type ItemAction = "add" | "edit" | "start" | "end" | "relist" | "delete";

// Setting the same fields again, or ending an ended listing, changes nothing; the others do.
const REPEATABLE: ReadonlySet<ItemAction> = new Set(["edit", "end"]);

function toText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

export function toItem(value: unknown): Item {
  // Some answers wrap the record: `{result, time, type, item: {...}}`.
  if (isRecord(value) && isRecord(value.item)) return toItem(value.item);
  const item: Item = {};
  if (isRecord(value)) for (const [key, field] of Object.entries(value)) item[key] = toText(field);
  return item;
}

/** A v1 page: items keyed `"1"`, `"2"`, … plus `all` and `time`. */
export function toItemPage(body: unknown, page: number): ItemPage {
  const items: Item[] = [];
  let total = 0;
  if (isRecord(body)) {
    const keys = Object.keys(body).filter((key) => /^\d+$/.test(key));
    keys.sort((a, b) => Number(a) - Number(b));
    for (const key of keys) items.push(toItem(body[key]));
    total = Number(body.all ?? items.length) || 0;
  }
  return { items, total, page };
}

function checked(method: string, path: string, body: unknown): unknown {
  const failure = v1Failure({ method, path }, body);
  if (failure) throw failure;
  return body;
}

export async function searchItems(caller: ServiceCaller, query: string, page = 1, signal?: AbortSignal): Promise<ItemPage> {
  const path = `/v1/search/items/${encodeURIComponent(query)}`;
  const res = await caller.send({ method: "GET", path, query: { page }, signal });
  return toItemPage(checked("GET", path, res.body), page);
}

export async function listItems(caller: ServiceCaller, options: { page?: number; sort?: string; signal?: AbortSignal } = {}): Promise<ItemPage> {
  const page = options.page ?? 1;
  const res = await caller.send({ method: "GET", path: "/v1/editor/items", query: { page, sort: options.sort }, signal: options.signal });
  return toItemPage(checked("GET", "/v1/editor/items", res.body), page);
}

/** One item by `guid` or `sku`; null when the service answers with the missing-record envelope. */
export async function getItem(caller: ServiceCaller, by: { guid: string } | { sku: string }, signal?: AbortSignal): Promise<Item | null> {
  const res = await caller.send({ method: "GET", path: "/v1/editor/items/edit", query: { ...by }, signal });
  if (isMissingRecord(res.body)) return null;
  return toItem(checked("GET", "/v1/editor/items/edit", res.body));
}

export async function getItemById(caller: ServiceCaller, id: number | string, signal?: AbortSignal): Promise<Item | null> {
  const path = `/v1/editor/items/edit/${encodeURIComponent(String(id))}`;
  const res = await caller.send({ method: "GET", path, signal });
  if (isMissingRecord(res.body)) return null;
  return toItem(checked("GET", path, res.body));
}

/**
 * One item change, form encoded with `identifier=guid`. Unspecified fields stay
 * unchanged. A v1 failure envelope (HTTP 200) becomes a `service_rejected` error.
 */
export async function itemAction(
  caller: ServiceCaller,
  action: ItemAction,
  guid: string,
  fields: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const path = `/v1/editor/items/${action}`;
  const res = await caller.send({
    method: "POST",
    path,
    form: { ...fields, identifier: "guid", guid },
    idempotent: REPEATABLE.has(action),
    signal,
  });
  const body = checked("POST", path, res.body);
  return isRecord(body) ? body : { result: String(body) };
}

/** Every item of a search (or the whole catalogue when `query` is undefined), page by page. */
export async function* pageItems(caller: ServiceCaller, options: { query?: string; sort?: string; signal?: AbortSignal } = {}): AsyncGenerator<Item[]> {
  let seen = 0;
  for (let page = 1; ; page++) {
    const result =
      options.query === undefined
        ? await listItems(caller, { page, sort: options.sort, signal: options.signal })
        : await searchItems(caller, options.query, page, options.signal);
    if (result.items.length === 0) return;
    yield result.items;
    seen += result.items.length;
    if (seen >= result.total) return;
  }
}
