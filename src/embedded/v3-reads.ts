import type { FastifyInstance } from "fastify";
import type { ServiceContext } from "./context.js";
import { badRequest, fields, text, v3Error, wholeNumber } from "../http/envelopes.js";
import { orderView } from "./order-model.js";
import { SORTABLE_ITEM_FIELDS } from "./item-store.js";
import { ORDER_SORT_KEYS } from "./order-store.js";
import { matchOrder } from "./order-search.js";
import { compileQuery } from "./query.js";
import { rawPathAfter, searchFromPath } from "./search-path.js";
import { removeSubUser } from "./user-store.js";
import { notInSandbox } from "./not-in-sandbox.js";

const SEARCH_PARAMS = ["page", "sort", "limit"] as const;
const SEARCH_TYPES = ["items", "pages", "categories", "tags", "orders"] as const;
/** Categories a search answers at most (v3 part 4.8: up to 20). */
const MAX_CATEGORIES = 20;

function rejectUnknown(query: Record<string, unknown>, valid: readonly string[]): void {
  const unknown = Object.keys(query).filter((k) => !valid.includes(k));
  if (unknown.length) throw badRequest(`unknown query parameter${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; valid parameters: ${valid.join(", ")}`);
}

/** The item categories of the sandbox's catalogue, which stand in for a channel's taxonomy. */
function categories(ctx: ServiceContext, search: string): string[] {
  const seen = new Set<string>();
  const needle = search.trim().toLowerCase();
  for (const item of ctx.items.sorted("category", false)) {
    const c = item.category ?? "";
    if (c && (!needle || c.toLowerCase().includes(needle))) seen.add(c);
  }
  return [...seen];
}

/**
 * The v3 reads of part 4.1 and 4.8 a sandbox user's scripts call: channel
 * statuses, categories and search over the sandbox's own catalogue and orders,
 * and sub-user deletion over its users.
 */
export function registerV3Reads(app: FastifyInstance, ctx: ServiceContext): void {
  // No channel is connected to a sandbox: the channels its orders name are listed, each inactive.
  app.get("/v3/channel/statuses", async () => {
    const rows = ctx.db.prepare("SELECT DISTINCT channel FROM orders WHERE channel <> '' ORDER BY channel").pluck().all() as string[];
    return { result: "success", channels: rows.map((channel) => ({ channel, instance: 0, status: "inactive" })) };
  });

  app.get<{ Params: { channel: string } }>("/v3/categories/:channel", async (request) => {
    const query = fields(request.query);
    rejectUnknown(query, ["search"]);
    const found = categories(ctx, text(query.search) ?? "").slice(0, MAX_CATEGORIES);
    return { result: "success", channel: request.params.channel, categories: found.map((name) => ({ id: name, name })) };
  });

  app.get<{ Params: { type: string; "*": string } }>("/v3/search/:type/*", async (request, reply) => {
    const { type } = request.params;
    const query = fields(request.query);
    if (!(SEARCH_TYPES as readonly string[]).includes(type)) throw badRequest(`type must be one of ${SEARCH_TYPES.join(", ")}, not ${JSON.stringify(type)} (the segment is an entity type, not a channel)`);
    rejectUnknown(query, SEARCH_PARAMS);
    if (type === "pages" || type === "tags") return notInSandbox(request, reply, `searches ${type}, and the sandbox keeps no storefront ${type}`);
    const page = wholeNumber(text(query.page), "page", 1, 1_000_000, 1);
    const limit = wholeNumber(text(query.limit), "limit", 1, 500, 50);
    const search = searchFromPath(rawPathAfter(request.url, `/v3/search/${type}`));
    const first = (page - 1) * limit;
    const timestamp = new Date(ctx.now()).toISOString();
    if (type === "categories") {
      const all = categories(ctx, "").filter((c) => compileQuery(search)({ category: c, name: c }));
      return { count: String(all.length), timestamp, categories: all.slice(first, first + limit).map((name) => ({ id: name, name })) };
    }
    const sortable: readonly string[] = type === "items" ? SORTABLE_ITEM_FIELDS : ORDER_SORT_KEYS;
    const sort = text(query.sort) ?? (type === "items" ? "id" : "oid");
    if (!sortable.includes(sort)) throw badRequest(`cannot sort ${type} by ${JSON.stringify(sort)}: use one of ${sortable.join(", ")}`);
    const matches = compileQuery(search);
    const out: unknown[] = [];
    let count = 0;
    if (type === "items") {
      for (const item of ctx.items.sorted(sort, false)) {
        if (!matches(item)) continue;
        count += 1;
        if (count > first && out.length < limit) out.push(item);
      }
      return { count: String(count), timestamp, items: out };
    }
    for (const order of ctx.orders.sorted(sort, false)) {
      if (!matchOrder(order, matches, false)) continue;
      count += 1;
      if (count > first && out.length < limit) out.push(orderView(order));
    }
    return { count: String(count), timestamp, orders: out };
  });

  // Part 7: the account endpoints take DELETE only.
  app.route({ method: ["GET", "POST", "PUT", "PATCH"], url: "/v3/account", handler: async (_request, reply) => reply.code(405).send(v3Error("DELETE is the only valid method of /v3/account")) });

  // The sandbox has no identity tokens, so only the owner (account value 0, the service's credentials) deletes sub-users.
  app.delete<{ Params: { uaid: string } }>("/v3/account/users/:uaid", async (request, reply) => {
    const { uaid } = request.params;
    if (!/^\d+$/.test(uaid) || Number(uaid) < 1) {
      return reply.code(400).send(v3Error(Number(uaid) === 0 ? "the owner cannot be deleted" : `uaid must be a positive whole number, not ${JSON.stringify(uaid)}`));
    }
    const callerIsOwner = request.apiUser !== undefined && ctx.db.prepare("SELECT 1 FROM users WHERE username = ? AND userpk > 0").get(request.apiUser) === undefined;
    if (!callerIsOwner) return reply.code(403).send(v3Error("only the account owner deletes sub-users in the sandbox (it has no identity tokens for scopes)"));
    if (!removeSubUser(ctx.db, Number(uaid))) return reply.code(404).send(v3Error(`no sub-user ${uaid} in the account`));
    return { message: `sub-user ${uaid} deleted`, result: "success" };
  });
}
