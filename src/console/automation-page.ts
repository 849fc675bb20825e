import type { FastifyReply, FastifyRequest } from "fastify";
import { customListed, installedShape, maskedParameters } from "../daemon/api/shapes.js";
import { truthyFlag } from "../daemon/definition-body.js";
import type { AutomationKind } from "../daemon/definitions-store.js";
import { toConveyorError } from "../errors.js";
import { MASK, maskSecrets } from "../secrets.js";
import { automationRow } from "./automation-rows.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { countsText, outcomeBadge, when } from "./format.js";
import { html, type Html } from "./html.js";
import { page } from "./layout.js";
import { runChart } from "./run-chart.js";
import { refusalPage } from "./security.js";

/** A parameter as its edit form shows it: a secret one never carries its value. */
interface ParameterView {
  name: string;
  description: string;
  value: string;
  secret: boolean;
  set: boolean;
}

/** Messages after a change, by code in `?done=`: fixed texts, so a link cannot put words on the page. */
const DONE: Record<string, string> = {
  saved: "Parameter saved.",
  unchanged: "The secret parameter was left as it was (the field was empty).",
  activated: "Automation activated: it runs on its schedule.",
  deactivated: "Automation deactivated: its schedule no longer starts runs.",
};

export function parseKind(value: unknown): AutomationKind | null {
  return value === "custom" || value === "installed" ? value : null;
}

function parameterViews(ctx: ConsoleContext, kind: AutomationKind, e: NonNullable<Awaited<ReturnType<typeof automationRow>>["effective"]>): ParameterView[] {
  if (kind === "installed") {
    return (installedShape(e).parameters as Array<{ name: string; description: string; encrypted: number; value: string | null }>).map((p) => ({
      name: p.name,
      description: p.description,
      secret: p.encrypted === 1 || p.value === MASK,
      set: p.value !== null && p.value !== "",
      value: p.encrypted === 1 || p.value === MASK ? "" : (p.value ?? ""),
    }));
  }
  return maskedParameters(e.raw.parameters, e.automation).map((p) => {
    const value = p.value === undefined || p.value === null ? "" : String(p.value);
    const secret = truthyFlag(p.encrypted) || value === MASK;
    return { name: String(p.name), description: typeof p.description === "string" ? p.description : "", secret, set: value !== "", value: secret ? "" : value };
  });
}

function parameterForm(base: string, csrf: string, p: ParameterView, i: number): Html {
  const id = `param-${i}`;
  const hint = p.secret ? `secret: write-only; ${p.set ? "a value is set" : "no value set"}; leave empty to keep it` : p.description;
  return html`<form method="post" action="${base}/parameters/${encodeURIComponent(p.name)}">
<input type="hidden" name="_csrf" value="${csrf}">
<label for="${id}">${p.name}</label>
${p.secret ? html`<input id="${id}" name="value" type="password" autocomplete="new-password" value="" aria-describedby="${id}-hint">` : html`<input id="${id}" name="value" value="${p.value}" aria-describedby="${id}-hint">`}
<button type="submit" class="secondary">Save</button>
<span id="${id}-hint" class="muted">${hint}</span>
</form>`;
}

function actionForm(base: string, csrf: string, path: string, label: string, extra: Html | string = "", confirm?: string, cls = ""): Html {
  return html`<form method="post" action="${base}/${path}"${confirm ? html` data-confirm="${confirm}"` : ""}>
<input type="hidden" name="_csrf" value="${csrf}">${extra}<button type="submit"${cls ? html` class="${cls}"` : ""}>${label}</button>
</form>`;
}

/** `/automations/{kind}/{id}`: its facts, actions, chart, parameters, masked definition and last runs. `problem` re-renders it after a refused change. */
export async function renderAutomation(ctx: ConsoleContext, request: FastifyRequest, reply: FastifyReply, problem: string | null = null, status = 200): Promise<FastifyReply> {
  const session = sessionOf(request);
  const params = request.params as Record<string, unknown>;
  const kind = parseKind(params.kind);
  const id = Number(params.id);
  if (!kind) return refusalPage(reply, 404, "No such page", `automations are custom or installed, not ${JSON.stringify(String(params.kind))}.`);
  let stored;
  try {
    stored = await ctx.definitions.own(session.account, kind, id);
  } catch (err) {
    return refusalPage(reply, 404, "Automation not found", `${toConveyorError(err).message} in this account.`);
  }
  const row = await automationRow(ctx, stored);
  const runs = await ctx.store.listRuns({ automation: String(stored.id), account: session.account, limit: 30 });
  const base = `/automations/${kind}/${stored.id}`;
  const done = DONE[String((request.query as Record<string, unknown>).done ?? "")];
  const e = row.effective;
  const definition = e ? maskSecrets(JSON.stringify(kind === "custom" ? customListed(e) : installedShape(e), null, 2)) : "";
  const active = row.state === "active";
  const body = html`<p><a href="/automations">Automations</a> › ${row.name}</p>
<h1>${row.name}</h1>
${problem === null ? "" : html`<p class="error" role="alert">${problem}</p>`}
${done ? html`<p class="notice" role="status">${done}</p>` : ""}
<dl class="facts">
<dt>Kind</dt><dd>${kind} automation ${stored.id}</dd>
<dt>State</dt><dd><span class="badge badge-${row.state}">${row.state}</span>${row.problem ? html` <span class="muted">${row.problem}</span>` : ""}</dd>
<dt>Schedule</dt><dd>${row.schedule ? html`<code>${row.schedule}</code> <span class="tz">${row.timezone}</span>` : "none"}</dd>
<dt>Events</dt><dd>${row.events?.length ? row.events.join(", ") : "none"}</dd>
<dt>Next run</dt><dd>${when(row.next, row.timezone)}</dd>
</dl>
<h2 id="actions">Actions</h2>
<div class="actions" role="group" aria-labelledby="actions">
${actionForm(base, session.csrf, "run", "Debug run", html`<input type="hidden" name="mode" value="debug">`)}
${actionForm(base, session.csrf, "run", "Diff run", html`<input type="hidden" name="mode" value="diff">`, "Run live, changing only what differs from the last run? It changes the shop's data.", "secondary")}
${actionForm(base, session.csrf, "run", "Run live", html`<input type="hidden" name="mode" value="live">`, "Run live now? It changes the shop's data.", "danger")}
${actionForm(base, session.csrf, "active", active ? "Deactivate" : "Activate", html`<input type="hidden" name="active" value="${active ? "0" : "1"}">`, undefined, "secondary")}
</div>
<h2>Last runs</h2>
${runChart(runs)}
${runs.length === 0 ? "" : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="runs-caption"><table>
<caption id="runs-caption">The last ${runs.length} runs, newest first</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Outcome</th><th scope="col">Started</th><th scope="col">Mode</th><th scope="col">Counts</th></tr></thead>
<tbody>${runs.map((r) => html`<tr><th scope="row"><a href="/runs/${r.id}"><code>${r.id}</code></a></th><td>${outcomeBadge(r.outcome)}</td><td>${when(r.started)}</td><td>${r.mode}${r.diff ? " diff" : ""}</td><td>${countsText(r.counts)}</td></tr>`)}</tbody>
</table></div>`}
<h2>Parameters</h2>
${e ? html`<div class="params">${parameterViews(ctx, kind, e).map((p, i) => parameterForm(base, session.csrf, p, i))}</div>` : html`<p>Fix the definition first: ${row.problem}</p>`}
<h2>Definition</h2>
<p class="muted">Secrets are shown as ********.</p>
<pre tabindex="0" aria-label="Definition as JSON">${definition}</pre>`;
  return reply.code(status).type("text/html; charset=utf-8").send(page({ title: row.name, account: session.account, csrf: session.csrf, active: "automations", body, script: true }));
}
