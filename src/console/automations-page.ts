import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { accountAutomations, type AutomationRow } from "./automation-rows.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { countsText, outcomeBadge, when } from "./format.js";
import { html, type Html } from "./html.js";
import { page } from "./layout.js";
import { refusalPage } from "./security.js";
import { requireSession } from "./session-routes.js";

const STATES = ["active", "inactive", "draft", "invalid"] as const;
const OUTCOMES = ["success", "partial", "failed", "canceled", "nothing", "never"] as const;

const filterSchema = z
  .object({
    q: z.string().max(200, "at most 200 characters").default(""),
    state: z.union([z.literal(""), z.enum(STATES)]).default(""),
    outcome: z.union([z.literal(""), z.enum(OUTCOMES)]).default(""),
  })
  .strict();

type Filters = z.infer<typeof filterSchema>;

function matches(row: AutomationRow, f: Filters): boolean {
  if (f.q !== "" && !row.name.toLowerCase().includes(f.q.trim().toLowerCase())) return false;
  if (f.state !== "" && row.state !== f.state) return false;
  if (f.outcome === "never") return row.lastRun === null;
  if (f.outcome !== "" && row.lastRun?.outcome !== f.outcome) return false;
  return true;
}

function options(values: readonly string[], chosen: string, any: string): Html[] {
  return ["", ...values].map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${v === "" ? any : v}</option>`);
}

function filterForm(f: Filters): Html {
  return html`<form method="get" action="/automations" class="filters" role="search" aria-label="Filter automations">
<div><label for="q">Name</label><input id="q" name="q" type="search" value="${f.q}"></div>
<div><label for="state">State</label><select id="state" name="state">${options(STATES, f.state, "any state")}</select></div>
<div><label for="outcome">Last outcome</label><select id="outcome" name="outcome">${options(OUTCOMES, f.outcome, "any outcome")}</select></div>
<div><button type="submit">Filter</button></div>
</form>`;
}

function lastRunCell(row: AutomationRow): Html {
  const run = row.lastRun;
  if (!run) return html`<span class="none">never ran</span>`;
  return html`<a href="/runs/${run.id}">${outcomeBadge(run.outcome)}</a> ${when(run.finished ?? run.started)}<br><span class="muted">${run.mode} · ${countsText(run.counts)}</span>`;
}

function rowHtml(row: AutomationRow): Html {
  const schedule = row.schedule.trim() === "" ? html`<span class="none">no schedule</span>` : html`<code>${row.schedule}</code> <span class="tz">${row.timezone}</span>`;
  const events = row.events && row.events.length > 0 ? row.events.join(", ") : html`<span class="none">—</span>`;
  return html`<tr>
<th scope="row"><a href="/automations/${row.kind}/${row.id}">${row.name}</a>${row.problem ? html`<br><span class="muted">${row.problem}</span>` : ""}</th>
<td data-label="Kind">${row.kind}</td>
<td data-label="State"><span class="badge badge-${row.state}">${row.state}</span></td>
<td data-label="Schedule">${schedule}</td>
<td data-label="Events">${events}</td>
<td data-label="Last run">${lastRunCell(row)}</td>
<td data-label="Next run">${when(row.next, row.timezone)}</td>
</tr>`;
}

/** `/automations`: every automation of the signed-in account, filtered by a GET form. */
export function registerAutomationsPage(app: FastifyInstance, ctx: ConsoleContext): void {
  app.get("/automations", { preHandler: requireSession }, async (request, reply) => {
    const session = sessionOf(request);
    const parsed = filterSchema.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.code === "unrecognized_keys" ? issue.keys.join(", ") : String(issue?.path[0] ?? "query");
      const allowed = `q (a name part), state (${STATES.join(", ")}), outcome (${OUTCOMES.join(", ")})`;
      return refusalPage(reply, 400, "Filter not understood", `${field}: ${issue?.message ?? "not valid"}. The filters are ${allowed}.`);
    }
    const filters = parsed.data;
    const all = await accountAutomations(ctx, session.account);
    const shown = all.filter((r) => matches(r, filters));
    const table =
      shown.length === 0
        ? html`<p>${all.length === 0 ? "This account has no automations yet." : "No automation matches these filters."}</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="automations-caption"><table class="cards-on-phone">
<caption id="automations-caption">${shown.length} of ${all.length} automations</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Schedule</th><th scope="col">Events</th><th scope="col">Last run</th><th scope="col">Next run</th></tr></thead>
<tbody>${shown.map(rowHtml)}</tbody>
</table></div>`;
    const body = html`<h1>Automations</h1>${filterForm(filters)}${table}`;
    return reply.type("text/html; charset=utf-8").send(page({ title: "Automations", account: session.account, csrf: session.csrf, active: "automations", body }));
  });
}
