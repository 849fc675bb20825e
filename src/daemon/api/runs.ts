import path from "node:path";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { runJson } from "../../cli-output/summary.js";
import { HttpError, badRequest, fields, text } from "../../http/envelopes.js";
import { isDebugFileName, type RunMode, type RunRecord } from "../../state/index.js";
import { accountOf, type ApiContext } from "./context.js";
import { positiveInt, rejectUnknown } from "./query.js";

const CONTENT_TYPES: Record<string, string> = {
  ".json": "application/json; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".xml": "application/xml; charset=utf-8",
};

export function runView(run: RunRecord): Record<string, unknown> {
  const running = !run.finished;
  return {
    ...runJson(run),
    account: run.account,
    force: run.force,
    notify: run.notify,
    email: run.email,
    state: running ? "running" : "finished",
    // Where a running run stands (stage, rows, files, rate), as any daemon sharing the store reads it.
    ...(running && run.progress ? { progress: run.progress } : {}),
  };
}

const RUN_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** The service's event ids (`evt_…`; the seed leaves their form open, so a little wider). */
const EVENT_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/** The run the path names, if it is of the request's account (a queued one: its queue entry); 404 otherwise. */
export async function ownRun(ctx: ApiContext, request: FastifyRequest): Promise<RunRecord | Record<string, unknown>> {
  const id = text(fields(request.params).runId) ?? "";
  if (!RUN_ID.test(id)) throw badRequest(`run id ${JSON.stringify(id)} is not a run id`);
  const account = accountOf(request);
  const run = await ctx.store.getRun(id);
  if (run && run.account === account) return run;
  // A run waiting in the cluster's queue may have been queued through another daemon.
  const waiting = ctx.queue.list().find((r) => r.id === id) ?? (await ctx.intake?.waiting(id)) ?? undefined;
  const owner = waiting ? await ctx.definitions.byKey(waiting.automation) : null;
  if (waiting && owner?.account === account) {
    return { id, automation: waiting.automation, mode: waiting.mode, state: waiting.state === "waiting" ? "queued" : "starting", outcome: null, enqueued: waiting.enqueued };
  }
  throw new HttpError(404, `no run ${id} in this account`);
}

/**
 * Our run-record routes (documented in the README): list runs (also the
 * runs that took one service event, `?event=`), one run, its debug files. A run queued but not started yet has no record: its id is
 * answered from the queue.
 */
export function registerRuns(app: FastifyInstance, ctx: ApiContext): void {
  const own = (request: FastifyRequest): Promise<RunRecord | Record<string, unknown>> => ownRun(ctx, request);

  app.get("/v3/automations/runs", async (request) => {
    const q = rejectUnknown(request, ["automation", "limit", "mode", "event"]);
    if (q.mode !== undefined && q.mode !== "debug" && q.mode !== "prod") throw badRequest(`mode must be debug or prod, not ${JSON.stringify(q.mode)}`);
    if (q.event !== undefined && !EVENT_ID.test(q.event)) throw badRequest(`event must be an event id (letters, digits, _ and -, up to 200), not ${JSON.stringify(q.event)}`);
    const runs = await ctx.store.listRuns({
      account: accountOf(request),
      ...(q.automation ? { automation: q.automation } : {}),
      ...(q.mode ? { mode: q.mode as RunMode } : {}),
      ...(q.event ? { event: q.event } : {}),
      limit: positiveInt(q.limit, "limit", 50, 1000),
    });
    return { count: String(runs.length), timestamp: ctx.now().toISOString(), runs: runs.map(runView) };
  });

  app.get("/v3/automations/runs/:runId", async (request) => {
    const run = await own(request);
    return "counts" in run ? runView(run as RunRecord) : run;
  });

  app.get("/v3/automations/runs/:runId/debug-files", async (request) => {
    const run = await own(request);
    return { id: run.id, debug_files: "counts" in run ? (run as RunRecord).debug_files : [] };
  });

  app.get("/v3/automations/runs/:runId/debug-files/*", async (request, reply) => {
    const run = await own(request);
    const name = text(fields(request.params)["*"]) ?? "";
    if (!isDebugFileName(name)) throw badRequest(`debug file name ${JSON.stringify(name)} is not allowed: give a name from the run's debug_files`);
    // Through the store: on PostgreSQL the file may have been written by another daemon.
    const file = await ctx.store.getDebugFile(String(run.id), name);
    if (!file) throw new HttpError(404, `run ${String(run.id)} has no debug file ${JSON.stringify(name)}`);
    const type = CONTENT_TYPES[path.extname(name).toLowerCase()] ?? "application/octet-stream";
    return reply.header("Content-Type", type).header("Content-Length", String(file.size)).send(file.open());
  });
}
