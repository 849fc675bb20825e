import type { FastifyInstance } from "fastify";
import { registerAutomationRoutes, SORTABLE } from "./automation-routes.js";
import { accountOf, type ApiContext } from "./context.js";
import { patchWithPointers } from "./pointer-patch.js";
import { LISTING_PARAMS, listing, mutation, pathId, rejectUnknown } from "./query.js";
import { publishedShape } from "./shapes.js";

/** Installed automations and the published catalogue they come from (part 4.2); the listing is among the shared routes. */
export function registerInstalled(app: FastifyInstance, ctx: ApiContext): void {
  app.post("/v3/automations/installed", async (request) => {
    const created = await ctx.definitions.install(accountOf(request), request.body);
    ctx.logger.info({ event: "automation_installed", automation: created.id, account: created.account, shared_id: created.sharedId }, "published automation installed");
    return mutation(created.id, 1, `published automation ${created.sharedId ?? ""} installed as ${created.id}`);
  });

  app.patch("/v3/automations/installed/:id", async (request) => {
    const id = pathId(request);
    const account = accountOf(request);
    await patchWithPointers(
      request.body,
      ctx.store,
      String(id),
      async () => ctx.definitions.effective(await ctx.definitions.own(account, "installed", id)).automation,
      (rest) => ctx.definitions.patchInstalled(account, id, rest),
    );
    return mutation(String(id), 2, `installed automation ${id} updated`);
  });

  registerAutomationRoutes(app, ctx, "installed");

  app.get("/v3/automations/published", async (request) => {
    const q = rejectUnknown(request, LISTING_PARAMS);
    const items = ctx.definitions.published
      .list()
      .filter((p) => q.type === undefined || q.type === p.automation.type || q.type === p.automation.action)
      .map(publishedShape);
    return listing("automations", items, q, SORTABLE, ctx.now());
  });
}
