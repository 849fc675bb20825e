import type { FastifyInstance } from "fastify";
import { registerAutomationRoutes } from "./automation-routes.js";
import { accountOf, type ApiContext } from "./context.js";
import { patchWithPointers } from "./pointer-patch.js";
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
    const account = accountOf(request);
    // metadata.pointers goes to the state store, where runs read pointers; the rest patches the definition.
    await patchWithPointers(
      request.body,
      ctx.store,
      String(id),
      async () => ctx.definitions.effective(await ctx.definitions.own(account, "custom", id)).automation,
      (rest) => ctx.definitions.patchCustom(account, id, rest),
    );
    ctx.logger.info({ event: "automation_updated", automation: id }, "custom automation updated");
    return mutation(String(id), 2, `custom automation ${id} updated`);
  });

  registerAutomationRoutes(app, ctx, "custom");
}
