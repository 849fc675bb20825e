/**
 * The console's run routes: the run page, the plan viewer, the JSON the run
 * page's script polls, and debug file downloads. The frame (sign-in, session,
 * layout) is handed in: `guard` lets only a signed-in session through,
 * `account` reads its account, `wrap` puts a page's `<main>` content into
 * the layout. Another account's run is a 404, as in the API.
 *
 * @module
 */

import path from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from "fastify";
import { fields, text } from "../http/envelopes.js";
import { isDebugFileName } from "../state/index.js";
import { html, type Html } from "./html.js";
import { renderPlanPage } from "./pages/plan.js";
import { renderRunPage } from "./pages/run.js";
import { liveData, planPageData, runPageData, type RunDataDeps } from "./run-data.js";

export interface RunPagesDeps extends RunDataDeps {
  /** The signed-in account of a request the guard let through. */
  account: (request: FastifyRequest) => string;
  /** The CSRF token of the request's session, for forms that change something. */
  csrf: (request: FastifyRequest) => string;
  wrap: (request: FastifyRequest, title: string, body: Html) => string;
  /** The address of run-live.js as the frame's asset route serves it. */
  liveScript?: string;
}

/** Debug files are downloaded, never shown inline: a kept feed could hold markup. */
const TYPES: Record<string, string> = { ".json": "application/json; charset=utf-8", ".csv": "text/csv; charset=utf-8" };

function query(request: FastifyRequest): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(fields(request.query))) out[k] = text(v);
  return out;
}

export function registerRunPages(app: FastifyInstance, deps: RunPagesDeps, guard: preHandlerHookHandler): void {
  const runId = (request: FastifyRequest): string => text(fields(request.params).runId) ?? "";
  const page = (reply: FastifyReply, body: string, status = 200): FastifyReply => reply.code(status).header("Content-Type", "text/html; charset=utf-8").send(body);
  const notFound = (request: FastifyRequest, reply: FastifyReply): FastifyReply =>
    page(reply, deps.wrap(request, "Run not found", html`<h1>Run not found</h1><p>No run ${runId(request)} in this account. <a href="/">Back to the automations</a></p>`), 404);

  app.get("/runs/:runId", { preHandler: guard }, async (request, reply) => {
    const data = await runPageData(deps, deps.account(request), runId(request), query(request));
    if (!data) return notFound(request, reply);
    const body = renderRunPage(data, { csrf: deps.csrf(request), ...(deps.liveScript ? { liveScript: deps.liveScript } : {}) });
    return page(reply, deps.wrap(request, `Run ${data.run.id}`, body));
  });

  app.get("/runs/:runId/plan", { preHandler: guard }, async (request, reply) => {
    const data = await planPageData(deps, deps.account(request), runId(request), query(request));
    if (!data) return notFound(request, reply);
    return page(reply, deps.wrap(request, `Plan of run ${data.run.id}`, renderPlanPage(data, { csrf: deps.csrf(request) })));
  });

  app.get("/runs/:runId/live.json", { preHandler: guard }, async (request, reply) => {
    const data = await liveData(deps, deps.account(request), runId(request));
    reply.header("Cache-Control", "no-store");
    if (!data) return reply.code(404).send({ result: "error", message: `no run ${runId(request)} in this account` });
    return data;
  });

  app.get("/runs/:runId/files/*", { preHandler: guard }, async (request, reply) => {
    const name = text(fields(request.params)["*"]) ?? "";
    const data = await liveData(deps, deps.account(request), runId(request));
    if (!data) return notFound(request, reply);
    if (!isDebugFileName(name)) return reply.code(400).send({ result: "error", message: `debug file name ${JSON.stringify(name)} is not allowed: give a name from the run's debug files` });
    const file = await deps.store.getDebugFile(data.id, name);
    if (!file) return reply.code(404).send({ result: "error", message: `run ${data.id} has no debug file ${JSON.stringify(name)}` });
    return reply
      .header("Content-Type", TYPES[path.extname(name).toLowerCase()] ?? "application/octet-stream")
      .header("Content-Length", String(file.size))
      .header("Content-Disposition", `attachment; filename="${path.basename(name).replace(/[^\w.-]/g, "_")}"`)
      .header("X-Content-Type-Options", "nosniff")
      .send(file.open());
  });
}
