import type { FastifyInstance } from "fastify";
import { registerAutomationRoutes } from "./automation-routes.js";
import { accountOf, type ApiContext } from "./context.js";
import { mutation, pathId } from "./query.js";

/** Custom automations (part 4.2): create, partial update, and the shared routes (the listing among them). */
export function registerCustom(app: FastifyInstance, ctx: ApiContext): void {
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
