import type { FastifyInstance } from "fastify";
import { HttpError, badRequest, fields, text } from "../../http/envelopes.js";
import { undoRefusal } from "../../undo/undoable.js";
import { accountOf, type ApiContext } from "./context.js";
import { query } from "./query.js";
import { queueRun, type RunHolds } from "./run-request.js";

const RUN_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * `POST /v3/automations/runs/{id}/undo` (issue 33, documented in the README):
 * queues an undo of a live product import like a run of its automation, with
 * `debug`, `force`, `notify`, `email` and `wait` as `…/run` takes them, and
 * `identifier` and `field` (comma-separated) as `conveyor undo` takes
 * `--identifier` and `--field`; it answers with the undo run's id. A run that cannot be undone is refused here
 * (409, with why) rather than queued to fail.
 */
export function registerUndo(app: FastifyInstance, ctx: ApiContext): void {
  const holds: RunHolds = new Set();
  app.addHook("preClose", async () => {
    for (const hold of holds) hold.abort("shutdown");
  });

  app.post("/v3/automations/runs/:runId/undo", async (request, reply) => {
    const id = text(fields(request.params).runId) ?? "";
    if (!RUN_ID.test(id)) throw badRequest(`run id ${JSON.stringify(id)} is not a run id`);
    const account = accountOf(request);
    const run = await ctx.store.getRun(id);
    if (!run || run.account !== account) throw new HttpError(404, `no run ${id} in this account`);
    const stored = await ctx.definitions.byKey(run.automation);
    if (!stored || stored.account !== account) throw new HttpError(404, `run ${id}'s automation ${run.automation} no longer exists, and its definition is needed to undo it`);
    const { automation } = ctx.definitions.effective(stored);
    const refusal = undoRefusal(automation) ?? (run.mode !== "prod" ? "it is a debug run and changed nothing" : run.undo?.journal === true ? null : (run.undo?.reason ?? "it has no undo journal"));
    if (refusal !== null) throw new HttpError(409, `run ${id} cannot be undone: ${refusal}`);
    if (run.outcome === null) throw new HttpError(409, `run ${id} is still running: undo it once it has ended`);
    const q = query(request);
    return queueRun(ctx, request, reply, holds, run.automation, account, { of: id, identifiers: listParam(q.identifier), fields: listParam(q.field) });
  });
}

/** `identifier=A1,A2`: the values, trimmed, empty ones dropped (none: the whole run). */
function listParam(value: string | undefined): string[] {
  return (value ?? "").split(",").map((v) => v.trim()).filter((v) => v !== "");
}
