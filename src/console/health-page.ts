import type { FastifyInstance } from "fastify";
import { accountAutomations } from "./automation-rows.js";
import { sessionOf, type ConsoleContext } from "./context.js";
import { outcomeBadge, when } from "./format.js";
import { html, type Html } from "./html.js";
import { page } from "./layout.js";
import { requireSession } from "./session-routes.js";

function meter(label: string, used: number, limit: number): Html {
  return html`<p><span id="rate-${label}">${label}: <strong>${used}</strong> of ${limit} requests</span><br>
<meter min="0" max="${limit}" value="${used}" low="${Math.floor(limit * 0.7)}" high="${Math.floor(limit * 0.9)}" optimum="0" aria-labelledby="rate-${label}">${used} of ${limit}</meter></p>`;
}

async function queueCard(ctx: ConsoleContext): Promise<Html> {
  const local = ctx.queue.depth();
  const cluster = ctx.cluster;
  if (!cluster) {
    return html`<div class="card"><h2>Queue</h2><p><span class="big">${local.running}</span> running · <span class="big">${local.waiting}</span> waiting</p><p class="muted">One daemon (SQLite).</p></div>`;
  }
  const [shared, holders] = await Promise.all([cluster.depth().catch(() => null), cluster.running().catch(() => [])]);
  return html`<div class="card"><h2>Queue</h2>
${shared ? html`<p>Cluster: <span class="big">${shared.running}</span> running · <span class="big">${shared.waiting}</span> waiting</p>` : html`<p class="error">The shared queue did not answer.</p>`}
<p>This daemon (<code>${cluster.daemon}</code>): ${local.running} running, ${local.waiting} waiting</p>
${holders.length ? html`<ul>${holders.map((h) => html`<li><code>${h.daemon}</code>: ${h.running} running</li>`)}</ul>` : ""}
</div>`;
}

/** `/health`: the queue, the account's rate budget this minute, its recent failures and next runs. */
export function registerHealthPage(app: FastifyInstance, ctx: ConsoleContext): void {
  app.get("/health", { preHandler: requireSession }, async (request, reply) => {
    const session = sessionOf(request);
    const automations = await accountAutomations(ctx, session.account);
    const names = new Map(automations.map((a) => [String(a.id), a]));
    // Other accounts' runs are counted in the queue's totals but never named.
    const mine = ctx.queue.list().filter((r) => names.has(r.automation));
    const usage = ctx.rateUsage ? await ctx.rateUsage(session.account).catch(() => null) : null;
    const failed = (await ctx.store.listRuns({ account: session.account, limit: 200 })).filter((r) => r.outcome === "failed").slice(0, 10);
    const next = automations.filter((a) => a.next !== null).sort((a, b) => (a.next?.getTime() ?? 0) - (b.next?.getTime() ?? 0)).slice(0, 10);
    const nameOf = (key: string): string => names.get(key)?.name ?? `automation ${key}`;
    const linkOf = (key: string): Html => {
      const a = names.get(key);
      return a ? html`<a href="/automations/${a.kind}/${a.id}">${a.name}</a>` : html`${nameOf(key)}`;
    };
    const body = html`<h1>Health</h1>
<div class="cards">
${await queueCard(ctx)}
<div class="card"><h2>Rate budget, last minute</h2>
${usage ? html`${meter("read", usage.read.used, usage.read.limit)}${meter("write", usage.write.used, usage.write.limit)}` : html`<p class="muted">The rate limiter does not report its use.</p>`}
<p class="muted">Requests your runs sent to the service.</p></div>
</div>
<h2>Your queued and running runs</h2>
${mine.length === 0 ? html`<p>None.</p>` : html`<ul>${mine.map((r) => html`<li>${linkOf(r.automation)}: ${r.mode} run <a href="/runs/${r.id}"><code>${r.id}</code></a>, ${r.state} since ${when(r.started ?? r.enqueued)}</li>`)}</ul>`}
<h2>Recent failed runs</h2>
${failed.length === 0 ? html`<p>No failed runs.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="failed-caption"><table>
<caption id="failed-caption">The last ${failed.length} failed runs</caption>
<thead><tr><th scope="col">Automation</th><th scope="col">Run</th><th scope="col">Started</th><th scope="col">Why</th></tr></thead>
<tbody>${failed.map((r) => html`<tr><th scope="row">${linkOf(r.automation)}</th><td><a href="/runs/${r.id}">${outcomeBadge(r.outcome)} <code>${r.id}</code></a></td><td>${when(r.started)}</td><td>${r.error?.message ?? r.guard?.message ?? ""}</td></tr>`)}</tbody>
</table></div>`}
<h2>Next runs</h2>
${next.length === 0 ? html`<p>Nothing is scheduled.</p>` : html`<ul>${next.map((a) => html`<li>${when(a.next, a.timezone)}: <a href="/automations/${a.kind}/${a.id}">${a.name}</a></li>`)}</ul>`}`;
    return reply.type("text/html; charset=utf-8").send(page({ title: "Health", account: session.account, csrf: session.csrf, active: "health", body }));
  });
}
