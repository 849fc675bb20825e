import type { FastifyInstance } from "fastify";
import type { Effective } from "../definitions.js";
import type { StoredAutomation } from "../definitions-store.js";
import { registerAutomationRoutes } from "./automation-routes.js";
import { accountOf, type ApiContext } from "./context.js";
import { LISTING_PARAMS, listing, mutation, pathId, rejectUnknown } from "./query.js";
import { customListed } from "./shapes.js";

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
export function listEffective(ctx: ApiContext, account: string, stored: StoredAutomation[], q: Record<string, string>): Effective[] {
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

/** Custom automations (part 4.2): listing, create, partial update, and the shared routes. */
export function registerCustom(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/v3/automations/custom", async (request) => {
    const q = rejectUnknown(request, LISTING_PARAMS);
    const account = accountOf(request);
    const items = listEffective(ctx, account, await ctx.definitions.list(account, "custom"), q).map(customListed);
    return listing("automations", items, q, SORTABLE, ctx.now());
  });

  app.post("/v3/automations/custom", async (request) => {
    const created = await ctx.definitions.createCustom(accountOf(request), request.body);
    ctx.logger.info({ event: "automation_created", automation: created.id, account: created.account, slug: created.slug }, "custom automation created");
    return mutation(created.id, 1, `custom automation ${created.id} created`);
  });

  app.patch("/v3/automations/custom/:id", async (request) => {
    const id = pathId(request);
    await ctx.definitions.patchCustom(accountOf(request), id, request.body);
    ctx.logger.info({ event: "automation_updated", automation: id }, "custom automation updated");
    return mutation(String(id), 2, `custom automation ${id} updated`);
  });

  registerAutomationRoutes(app, ctx, "custom");
}
