import type { FastifyInstance, FastifyRequest } from "fastify";
import { apiSource, type ServiceContext } from "./context.js";
import { HttpError, missingRecord, text, unixTime } from "../http/envelopes.js";
import { applyItemChange, isIdentifierField, isItemAction, ITEM_ACTIONS } from "./item-ops.js";
import { SORTABLE_ITEM_FIELDS, type Item } from "./item-store.js";
import { compileQuery } from "./query.js";
import { readFields } from "./form.js";
import { notInSandbox } from "./not-in-sandbox.js";
import { searchFromUrl } from "./search-path.js";

/** v1 listings: pages of 50 (service.md). */
export const ITEMS_PAGE_SIZE = 50;

interface ListQuery {
  page?: string;
  sort?: string;
}

function parsePage(value: unknown): number {
  const t = text(value);
  if (t === undefined || t === "") return 1;
  if (!/^\d+$/.test(t) || Number(t) < 1) throw new HttpError(400, `page must be a whole number 1 or greater, not ${JSON.stringify(t)}`);
  return Number(t);
}

function parseSort(value: unknown): { field: string; descending: boolean } {
  const t = text(value)?.trim() ?? "";
  if (t === "") return { field: "id", descending: false };
  const descending = t.endsWith("_");
  const field = descending ? t.slice(0, -1) : t;
  if (!(SORTABLE_ITEM_FIELDS as readonly string[]).includes(field)) {
    throw new HttpError(400, `cannot sort by ${JSON.stringify(field)}: sortable fields are ${SORTABLE_ITEM_FIELDS.join(", ")} (append _ for descending)`);
  }
  return { field, descending };
}

/**
 * One page keyed by the item's ordinal in the whole result ("1", "2", … on
 * page 1, "51", … on page 2), plus `all` (the total) and `time`. Without a
 * search SQLite pages; with one, matching items are counted in one pass and
 * only the page is kept.
 */
export function listItems(ctx: ServiceContext, query: ListQuery, search: string | undefined): Record<string, unknown> {
  const page = parsePage(query.page);
  const { field, descending } = parseSort(query.sort);
  const first = (page - 1) * ITEMS_PAGE_SIZE;
  const out: Record<string, unknown> = {};
  let all = 0;
  if (search === undefined || search.trim() === "") {
    all = ctx.items.count();
    let ordinal = first;
    for (const item of ctx.items.sorted(field, descending, ITEMS_PAGE_SIZE, first)) out[String(++ordinal)] = item;
  } else {
    const matches = compileQuery(search);
    for (const item of ctx.items.sorted(field, descending)) {
      if (!matches(item)) continue;
      all += 1;
      if (all > first && all <= first + ITEMS_PAGE_SIZE) out[String(all)] = item;
    }
  }
  return { ...out, all, time: unixTime(ctx.now()) };
}

/**
 * The seed names the bulk `POST /v1/editor/items` (the body's shape picks bulk
 * create, edit, category or media) but not its field names: the sandbox does
 * not guess them.
 */
export const BULK_BODY_UNSHOWN =
  "takes a bulk body whose field names the service's documentation does not show, so the sandbox does not guess them; " +
  "send each item to POST /v1/editor/items/add or /v1/editor/items/edit, or many as a CSV to POST /v1/bulk";

/** The seed fills `media<N>` and `mediax` with image URLs and describes no upload into them. */
export function mediaFileHint(field: string): string | undefined {
  if (!/^media(\d+|x)$/i.test(field)) return undefined;
  return `${field} takes an image URL (mediax: URLs joined by *), not a file; the service's documentation describes no upload into media slots, so send ${field}=<https URL of the image>`;
}

/** The full record itself (v1 part 4.2), or the missing-record envelope. */
function found(ctx: ServiceContext, item: Item | undefined): Record<string, unknown> {
  return item ?? missingRecord(ctx.now());
}

export function registerItems(app: FastifyInstance, ctx: ServiceContext): void {
  // The raw URL, not the decoded parameter: `&` and `%26` mean different things in a search path.
  const search = (request: FastifyRequest<{ Querystring: ListQuery }>): Record<string, unknown> =>
    listItems(ctx, request.query, searchFromUrl(request.url, "/v1/search/items"));
  app.get<{ Querystring: ListQuery }>("/v1/search/items", search);
  app.get<{ Querystring: ListQuery }>("/v1/search/items/*", search);

  app.get<{ Querystring: ListQuery }>("/v1/editor/items", async (request) => listItems(ctx, request.query, undefined));

  app.get<{ Querystring: ListQuery & { guid?: string; sku?: string } }>("/v1/editor/items/edit", async (request) => {
    const guid = text(request.query.guid);
    const sku = text(request.query.sku);
    if (guid !== undefined) return found(ctx, ctx.items.find("guid", guid));
    if (sku !== undefined) return found(ctx, ctx.items.find("sku", sku));
    return listItems(ctx, request.query, undefined);
  });

  // A non-numeric id is a missing record, not an HTTP error (v1 part 7).
  app.get<{ Params: { id: string } }>("/v1/editor/items/edit/:id", async (request) => found(ctx, ctx.items.find("id", request.params.id)));

  app.post("/v1/editor/items", async (request, reply) => notInSandbox(request, reply, BULK_BODY_UNSHOWN));

  app.post<{ Params: { action: string } }>("/v1/editor/items/:action", async (request, reply) => {
    const action = request.params.action;
    // The official client posts to `items/` (an empty action) for the bulk shape.
    if (action === "") return notInSandbox(request, reply, BULK_BODY_UNSHOWN);
    if (!isItemAction(action)) throw new HttpError(404, `unknown item operation ${JSON.stringify(action)}: use one of ${ITEM_ACTIONS.join(", ")}`);
    const body = await readFields(request, { fileHint: mediaFileHint });
    if (Object.keys(body).length === 0) throw new HttpError(400, `the body has no fields: send identifier=guid|sku|id, that field, and the fields to set (urlencoded, multipart, JSON or json=<JSON>)`);
    const named = text(body.identifier);
    const identifier = named ?? "guid";
    if (!isIdentifierField(identifier)) throw new HttpError(400, `identifier must be guid, sku or id, not ${JSON.stringify(identifier)}`);
    const value = text(body[identifier]);
    if (value === undefined) {
      const why = named === undefined ? "the body has no identifier field, so the item is named by guid," : `the body names identifier=${identifier}`;
      throw new HttpError(400, `${why} but has no ${identifier} field: send ${identifier}=<value>`);
    }
    const given: Record<string, string> = {};
    for (const [key, raw] of Object.entries(body)) {
      const v = text(raw);
      if (key !== "identifier" && v !== undefined) given[key] = v;
    }
    const outcome = applyItemChange(ctx.items, ctx.logs, { action, identifier, value, fields: given }, apiSource(request), ctx.now());
    const time = unixTime(ctx.now());
    // A refused change is HTTP 200 with the failure envelope: v1 callers read `result`, not the status.
    if (!outcome.ok) return reply.code(200).send({ result: "failure", message: outcome.message, time });
    return { result: "success", message: outcome.message, time, id: outcome.item.id, guid: outcome.item.guid, item: outcome.item };
  });
}
