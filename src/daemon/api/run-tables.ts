import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpError } from "../../http/envelopes.js";
import { planQuery } from "../../console/plan/query.js";
import { debugTablesOf } from "../../console/plan/shared.js";
import type { ApiContext } from "./context.js";
import { ownRun } from "./runs.js";
import { rejectUnknown } from "./query.js";

/**
 * The plan viewer's data as JSON (README, "Plan viewer"): a page of 100
 * planned changes of a run's plan.csv, filtered by action, field and
 * identifier, and a page of its errors.csv. Account-scoped as every run route:
 * another account's run is a 404.
 */
export function registerRunTables(app: FastifyInstance, ctx: ApiContext): void {
  const tables = debugTablesOf(ctx.store, ctx.settings.dataDir);

  const runId = async (request: FastifyRequest): Promise<string> => {
    const run = await ownRun(ctx, request);
    return String(run.id);
  };

  app.get("/v3/automations/runs/:runId/plan", async (request) => {
    const { page, filter } = planQuery(rejectUnknown(request, ["page", "action", "field", "identifier"]));
    const id = await runId(request);
    const found = await tables.plan(id, filter, page);
    if (!found) throw new HttpError(404, `run ${id} has no plan.csv: only a debug run (or an undo's) writes one, and only when it planned a change`);
    return found;
  });

  app.get("/v3/automations/runs/:runId/errors", async (request) => {
    const { page } = planQuery(rejectUnknown(request, ["page"]));
    const id = await runId(request);
    const found = await tables.errors(id, page);
    if (!found) throw new HttpError(404, `run ${id} has no errors.csv: it had no row errors and no failed records`);
    return found;
  });
}
