import type { FastifyInstance } from "fastify";
import { badRequest, fields, text } from "../../http/envelopes.js";
import type { Effective } from "../definitions.js";
import type { AutomationKind, StoredAutomation } from "../definitions-store.js";
import { accountOf, type ApiContext } from "./context.js";
import { LISTING_PARAMS, listing, mutation, pathId, rejectUnknown } from "./query.js";
import { queueRun, type RunHolds } from "./run-request.js";
import { currentPointers } from "./pointer-patch.js";
import { registerPushFeed } from "./push-feed.js";
import { customFetched, customListed, installedShape, statusShape } from "./shapes.js";

type Json = Record<string, unknown>;

/** Sort keys of the automation listings. */
export const SORTABLE: Record<string, (item: Json) => string | number | null> = {
  id: (a) => Number(a.id),
  name: (a) => String(a.name),
  slug: (a) => String(a.slug),
  type: (a) => String(a.type),
  action: (a) => String(a.action),
  schedule: (a) => String(a.schedule),
  created: (a) => String(a.created),
  last_modified: (a) => String(a.last_modified),
};

/** The account's automations of one kind that still validate, filtered by the listing's `type` and `user_id`. */
function listEffective(ctx: ApiContext, account: string, stored: StoredAutomation[], q: Record<string, string>): Effective[] {
  if (q.user_id !== undefined && q.user_id !== account) return [];
  const out: Effective[] = [];
  for (const s of stored) {
    try {
      const e = ctx.definitions.effective(s);
      if (q.type === undefined || q.type === e.automation.type || q.type === e.automation.action) out.push(e);
    } catch (err) {
      ctx.logger.warn({ automation: s.id, err: (err as Error).message }, "automation left out of the listing: it no longer validates");
    }
  }
  return out;
}

/**
 * The routes custom and installed automations share (part 4.2): the listing,
 * fetch by id, delete, set one parameter, run, reset the status. Each looks
 * the id up within the caller's account only.
 */
export function registerAutomationRoutes(app: FastifyInstance, ctx: ApiContext, kind: AutomationKind): void {
  const base = `/v3/automations/${kind}/:id`;
  const holds: RunHolds = new Set();
  // Without this a shutdown would sit out every `?wait=` still held, up to its full time.
  app.addHook("preClose", async () => {
    for (const hold of holds) hold.abort("shutdown");
  });

  app.get(`/v3/automations/${kind}`, async (request) => {
    const q = rejectUnknown(request, LISTING_PARAMS);
    const account = accountOf(request);
    const effective = listEffective(ctx, account, await ctx.definitions.list(account, kind), q);
    const shape = kind === "custom" ? customListed : installedShape;
    const items = await Promise.all(effective.map(async (e) => shape(e, await currentPointers(ctx.store, String(e.stored.id), e.automation))));
    return listing("automations", items, q, SORTABLE, ctx.now());
  });

  app.get(base, async (request) => {
    rejectUnknown(request, LISTING_PARAMS);
    const stored = await ctx.definitions.own(accountOf(request), kind, pathId(request));
    const e = ctx.definitions.effective(stored);
    const status = await ctx.store.status(String(stored.id));
    const automation = (kind === "custom" ? customFetched : installedShape)(e, await currentPointers(ctx.store, String(stored.id), e.automation));
    return { automation, status: statusShape(status, kind), timestamp: ctx.now().toISOString() };
  });

  app.delete(base, async (request) => {
    const id = pathId(request);
    await ctx.definitions.remove(accountOf(request), kind, id);
    return mutation(String(id), 3, `${kind} automation ${id} deleted`);
  });

  app.put(`${base}/parameters/:name`, async (request) => {
    const id = pathId(request);
    const name = text(fields(request.params).name) ?? "";
    await ctx.definitions.setParameter(accountOf(request), kind, id, name, request.body);
    return mutation(String(id), 2, `parameter "${name}" of ${kind} automation ${id} updated`);
  });

  app.get(`${base}/run`, async (request, reply) => {
    const account = accountOf(request);
    const stored = await ctx.definitions.own(account, kind, pathId(request));
    // A definition that no longer validates is refused here, with every problem, rather than queued to fail.
    ctx.definitions.effective(stored);
    return queueRun(ctx, request, reply, holds, String(stored.id), account);
  });

  registerPushFeed(app, ctx, kind);

  app.delete(`${base}/status`, async (request) => {
    const q = rejectUnknown(request, ["type"]);
    const stored = await ctx.definitions.own(accountOf(request), kind, pathId(request));
    if (q.type !== "debug" && q.type !== "prod") throw badRequest(`type is required: debug or prod${q.type === undefined ? "" : `, not ${JSON.stringify(q.type)}`}`);
    await ctx.store.resetStatus(String(stored.id), q.type);
    return mutation(String(stored.id), 3, `${q.type} status of ${kind} automation ${stored.id} reset`);
  });
}
