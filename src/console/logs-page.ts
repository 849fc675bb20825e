import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { logQuery } from "../daemon/api/logs.js";
import { toConveyorError } from "../errors.js";
import type { LogPage } from "../state/index.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { html, type Html } from "./html.js";
import { page } from "./layout.js";
import { refusalPage } from "./security.js";
import { requireSession } from "./session-routes.js";

/** `datetime-local` sends `2026-01-31T23:59` (seconds only when typed): the API's `Y-m-d H:i:s`. */
const LOCAL_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/;

const form = z
  .object({
    identifier: z.string().max(1000).default(""),
    job_id: z.string().max(200).default(""),
    from: z.union([z.literal(""), z.string().regex(LOCAL_TIME, "a date and time like 2026-01-31T23:59")]).default(""),
    to: z.union([z.literal(""), z.string().regex(LOCAL_TIME, "a date and time like 2026-01-31T23:59")]).default(""),
    start: z.string().regex(/^\d{0,9}$/, "a whole number").default(""),
  })
  .strict();

type LogForm = z.infer<typeof form>;

function apiTime(local: string, end: boolean): string {
  const m = LOCAL_TIME.exec(local);
  return m ? `${m[1]} ${m[2]}${m[3] ?? (end ? ":59" : ":00")}` : local;
}

/** The search as the API takes it. One bound alone is allowed here: the other end is left open. */
function searchParams(f: LogForm): Record<string, string> {
  const p: Record<string, string> = {};
  if (f.identifier.trim() !== "") p.identifier = f.identifier.trim();
  if (f.job_id.trim() !== "") p.job_id = f.job_id.trim();
  if (f.from !== "" || f.to !== "") {
    p.timestamp_start = f.from === "" ? "0000-01-01 00:00:00" : apiTime(f.from, false);
    p.timestamp_end = f.to === "" ? "9999-12-31 23:59:59" : apiTime(f.to, true);
  }
  if (f.start !== "") p.start = f.start;
  return p;
}

function searchForm(f: LogForm): Html {
  return html`<form method="get" action="/logs" class="filters" role="search" aria-label="Search the logs">
<div><label for="identifier">Identifier</label><input id="identifier" name="identifier" value="${f.identifier}" aria-describedby="identifier-hint"><span id="identifier-hint" class="muted">several: comma separated</span></div>
<div><label for="job_id">Job id</label><input id="job_id" name="job_id" value="${f.job_id}"></div>
<div><label for="from">From (UTC)</label><input id="from" name="from" type="datetime-local" step="1" value="${f.from}"></div>
<div><label for="to">To (UTC)</label><input id="to" name="to" type="datetime-local" step="1" value="${f.to}"></div>
<div><button type="submit">Search</button></div>
</form>`;
}

function results(found: LogPage, start: number, f: LogForm): Html {
  if (found.logs.length === 0) return html`<p>No log records match.</p>`;
  const more = start + found.logs.length < found.found;
  const nextLink = new URLSearchParams({ ...searchFormFields(f), start: String(start + found.logs.length) });
  return html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="logs-caption"><table>
<caption id="logs-caption">Records ${start + 1}–${start + found.logs.length} of ${found.found}${found.found_more_logs ? "+" : ""}, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Identifier</th><th scope="col">Job</th><th scope="col">Action</th><th scope="col">Result</th><th scope="col">Message</th></tr></thead>
<tbody>${found.logs.map((r) => html`<tr><td>${r.timestamp}</td><th scope="row">${r.identifier}</th><td><code>${r.job_id}</code></td><td>${r.action} ${r.operation}</td><td>${r.result}</td><td>${r.message}</td></tr>`)}</tbody>
</table></div>
${more ? html`<p><a href="/logs?${nextLink.toString()}">Older records</a></p>` : ""}`;
}

function searchFormFields(f: LogForm): Record<string, string> {
  return { identifier: f.identifier, job_id: f.job_id, from: f.from, to: f.to };
}

/** `/logs`: the log search of `POST /v3/logs`, through the same query code, as a GET form (a search changes nothing). */
export function registerLogsPage(app: FastifyInstance, ctx: ConsoleContext): void {
  app.get("/logs", { preHandler: requireSession }, async (request, reply) => {
    const session = sessionOf(request);
    const parsed = form.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : String(issue?.path[0] ?? "query");
      return refusalPage(reply, 400, "Search not understood", `${field}: ${issue?.message ?? "not valid"}. The search takes identifier, job_id, from, to (dates like 2026-01-31T23:59) and start.`, { href: "/logs", label: "A new search" });
    }
    const f = parsed.data;
    let shown: Html;
    let status = 200;
    try {
      const query = logQuery(searchParams(f), session.account);
      shown = results(await ctx.store.searchLogs(query), query.start ?? 0, f);
    } catch (err) {
      status = 400;
      shown = html`<p class="error" role="alert">${toConveyorError(err).message}</p>`;
    }
    const body = html`<h1>Logs</h1><p class="muted">The records your runs wrote to the service's log, as <code>POST /v3/logs</code> finds them.</p>${searchForm(f)}${shown}`;
    return reply.code(status).type("text/html; charset=utf-8").send(page({ title: "Logs", account: session.account, csrf: session.csrf, active: "logs", body }));
  });
}
